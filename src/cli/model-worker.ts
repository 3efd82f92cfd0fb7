import { parentPort, workerData } from 'node:worker_threads';
import { isSimParameterError, simModels } from '../sim/index.js';

/** One model run off the CLI's main thread (see `runWithElapsedBar` in model.ts). */
const { name, params, chart } = workerData as {
  name: string;
  params: Record<string, unknown>;
  chart: boolean;
};
const definition = simModels.find((model) => model.name === name);
try {
  if (!definition) throw new Error(`no model named ${name}`);
  const run = definition.run(params);
  // The chart of a long sweep is large; it crosses threads only when `--plot` will draw it.
  parentPort?.postMessage({
    run: chart ? run : { ...run, chart: { title: '', x: { label: '' }, y: { label: '' } } },
  });
} catch (error) {
  parentPort?.postMessage(
    isSimParameterError(error)
      ? { problem: error.problem }
      : { error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
  );
}
