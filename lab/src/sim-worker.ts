// Runs a model off the UI thread: Monte Carlo at the posts' trial counts takes tens of
// milliseconds to seconds, and the page must never freeze. Charts are rendered here too, so the
// page's own bundle carries neither the simulators nor d3.
import { renderChartSvg } from '../../src/plot/index.js';
import { findSimModel, isSimParameterError } from '../../src/sim/index.js';

export interface SimJob {
  id: number;
  model: string;
  params: Record<string, unknown>;
  trials?: number;
  seed?: number;
}

export type SimReply =
  | { id: number; type: 'progress'; done: number; total: number }
  | {
      id: number;
      type: 'result';
      json: Record<string, unknown>;
      tables: { title?: string; head: string[]; rows: string[][] }[];
      notes: string[];
      svg: string;
      elapsedMs: number;
    }
  | { id: number; type: 'error'; message: string };

const scope = self as unknown as {
  postMessage(message: SimReply): void;
  onmessage: ((event: MessageEvent<SimJob>) => void) | null;
};

scope.onmessage = (event) => {
  const job = event.data;
  const model = findSimModel(job.model);
  if (!model) {
    scope.postMessage({ id: job.id, type: 'error', message: `unknown model ${job.model}` });
    return;
  }
  const started = performance.now();
  let lastReport = 0;
  try {
    const run = model.run(job.params, {
      ...(job.trials !== undefined ? { trials: job.trials } : {}),
      ...(job.seed !== undefined ? { seed: job.seed } : {}),
      onProgress: (done, total) => {
        const now = performance.now();
        if (now - lastReport < 16 && done < total) return;
        lastReport = now;
        scope.postMessage({ id: job.id, type: 'progress', done, total });
      },
    });
    scope.postMessage({
      id: job.id,
      type: 'result',
      json: run.json,
      tables: run.tables,
      notes: run.notes,
      svg: renderChartSvg(run.chart),
      elapsedMs: performance.now() - started,
    });
  } catch (error) {
    const message = isSimParameterError(error)
      ? error.problem
      : error instanceof Error
        ? error.message
        : String(error);
    scope.postMessage({ id: job.id, type: 'error', message });
  }
};
