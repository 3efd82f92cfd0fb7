import { raceSignal, stoppedFailure } from './abortable.js';
import { thrownFailure } from './pipeline-run.js';
import { checkStageName, type Stage, type StageContext } from './stage.js';

/**
 * A stage that is plain code: a lookup, a grouping, a render, a send. Its output is checkpointed
 * (as JSON) when the pipeline has a stage store, so a resumed pipeline does not run it again. A throw
 * ends the pipeline `stage_error` naming the stage; the pipeline's signal (and a fan-out branch's
 * timeout) abandons it.
 *
 * @example
 * import { step } from 'reins/pipeline';
 * const group = step('group', (tickets: { category: string }[]) => Object.groupBy(tickets, (t) => t.category));
 */
export function step<Input, Output>(
  name: string,
  fn: (input: Input, context: StageContext) => Output | Promise<Output>,
): Stage<Input, Awaited<Output>> {
  checkStageName(name, 'step');
  if (typeof fn !== 'function') throw new TypeError(`step ${name}: must be given a function`);
  return {
    name,
    kind: 'function',
    run(input, path, run, signal) {
      return run.leaf('function', path, async () => {
        if (signal.aborted) return { ok: false, failure: stoppedFailure(path, signal) };
        const context: StageContext = {
          signal,
          runId: run.setup.runId,
          stage: path,
          jobBudget: run.setup.jobBudget,
          spender: `${run.setup.spender}/stage:${path}`,
          actor: run.setup.actor,
        };
        let returned: Output | Promise<Output>;
        try {
          returned = fn(input, context);
        } catch (thrown) {
          return { ok: false, failure: thrownFailure(path, thrown) };
        }
        // A plain value needs no race.
        if (!(returned instanceof Promise)) return { ok: true, output: returned as Awaited<Output> };
        const raced = await raceSignal(returned, signal);
        if (raced.kind === 'value') return { ok: true, output: raced.value as Awaited<Output> };
        if (raced.kind === 'thrown') return { ok: false, failure: thrownFailure(path, raced.thrown) };
        return { ok: false, failure: stoppedFailure(path, signal) };
      });
    },
  };
}
