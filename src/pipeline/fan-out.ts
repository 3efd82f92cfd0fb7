import { ConfigurationError } from '../errors/reins-error.js';
import { mapConcurrent } from '../loop/map-concurrent.js';
import { StageTimeout } from './abortable.js';
import type { StageFailure } from './pipeline-outcome.js';
import type { PipelineRun } from './pipeline-run.js';
import { checkStageName, childPath, type Stage, type StageResult } from './stage.js';

/** One branch of a fan-out, labeled: its output, or why it has none. */
export type BranchResult<Item, Output> =
  | { index: number; item: Item; status: 'ok'; output: Output }
  | { index: number; item: Item; status: 'failed'; failure: StageFailure };

/** Options for {@link fanOut}. */
export interface FanOutSpec<Input, Item, Output> {
  name: string;
  /** The known list to fan out over, from the stage's input. */
  items: (input: Input) => readonly Item[];
  /** What runs for each item (its own stages' paths end in `[index]`). */
  branch: Stage<Item, Output>;
  /** Branches in flight at once. @default 4 */
  concurrency?: number;
  /** Each branch's time, on the pipeline's clock; a branch past it is `timed_out`. @default none */
  branchTimeoutMs?: number;
}

/**
 * The same stage over each item of a known list, at most `concurrency` at once, each under its own
 * timeout: the seeds' fan-out. Its output is every branch's result, labeled `ok` or `failed` with
 * the failure, in the list's order, for a {@link fanIn} to gate. A failed branch does not stop the
 * others; two things do stop the fan-out: the job's budget running out in any branch (the job ends
 * there, naming the spender) and the pipeline's cancellation. On resume, completed branches are
 * restored, not run again.
 *
 * @example
 * import { fanOut, step } from 'reins/pipeline';
 * const sizes = fanOut({ name: 'files', items: (files: string[]) => files, branch: step('size', (f: string) => f.length) });
 */
export function fanOut<Input, Item, Output>(
  spec: FanOutSpec<Input, Item, Output>,
): Stage<Input, BranchResult<Item, Output>[]> {
  const name = checkStageName(spec.name, 'fanOut');
  const concurrency = spec.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigurationError(
      `fanOut ${name}.concurrency`,
      `must be an integer ≥ 1, got ${String(concurrency)}`,
    );
  if (spec.branchTimeoutMs !== undefined && !(spec.branchTimeoutMs > 0))
    throw new ConfigurationError(
      `fanOut ${name}.branchTimeoutMs`,
      `must be > 0, got ${String(spec.branchTimeoutMs)}`,
    );
  if (typeof spec.branch?.run !== 'function')
    throw new ConfigurationError(`fanOut ${name}.branch`, 'must be a stage');
  return {
    name,
    kind: 'fan-out',
    run(input, path, run, signal) {
      return run.composite('fan-out', path, async (): Promise<StageResult<BranchResult<Item, Output>[]>> => {
        let items: readonly Item[];
        try {
          items = spec.items(input);
        } catch (thrown) {
          return {
            ok: false,
            failure: {
              kind: 'stage_error',
              stage: path,
              error: { name: 'ItemsError', message: String(thrown) },
            },
          };
        }
        let stop: StageFailure | undefined;
        const results = await mapConcurrent(items, concurrency, async (item, index) => {
          const branchPath = childPath(path, `${spec.branch.name}[${index}]`);
          // Once the job is out of budget or the pipeline cancelled, the branches left are not started.
          const result: StageResult<Output> = stop
            ? { ok: false, failure: stop }
            : await runBranch(spec, item, branchPath, run, signal);
          if (!result.ok && (result.failure.kind === 'over_budget' || result.failure.kind === 'cancelled'))
            stop ??= result.failure;
          return result.ok
            ? { index, item, status: 'ok' as const, output: result.output }
            : { index, item, status: 'failed' as const, failure: result.failure };
        });
        if (stop) return { ok: false, failure: stop };
        return { ok: true, output: results };
      });
    },
  };
}

/** One branch under its timeout: a child signal that the pipeline's abort and the timer both reach. */
async function runBranch<Input, Item, Output>(
  spec: FanOutSpec<Input, Item, Output>,
  item: Item,
  path: string,
  run: PipelineRun,
  signal: AbortSignal,
): Promise<StageResult<Output>> {
  const timeoutMs = spec.branchTimeoutMs;
  if (timeoutMs === undefined) return spec.branch.run(item, path, run, signal);
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  const clock = run.setup.clock;
  const timer = clock.setTimeout(() => controller.abort(new StageTimeout(timeoutMs)), timeoutMs);
  try {
    return await spec.branch.run(item, path, run, controller.signal);
  } finally {
    clock.clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
}

/** What a {@link fanIn} hands on: the outputs that arrived, and each failed branch, labeled. */
export interface Gathered<Item, Output> {
  outputs: Output[];
  /** The items whose branches succeeded, in the same order as `outputs`. */
  items: Item[];
  failed: { index: number; item: Item; failure: StageFailure }[];
}

/** Options for {@link fanIn}. */
export interface FanInSpec {
  name: string;
  /** Successful branches needed to go on. @default every branch */
  minSucceeded?: number;
}

/**
 * Gathers a fan-out: the successful outputs in order and the failures labeled. With fewer than
 * `minSucceeded` successes the pipeline ends `insufficient_branches`, listing each failed branch
 * and why. Chain a model stage after it for the seeds' combine step.
 *
 * @example
 * import { chain, fanIn, fanOut, step } from 'reins/pipeline';
 * const total = chain('total', fanOut({ name: 'each', items: (xs: number[]) => xs, branch: step('double', (x: number) => x * 2) }), fanIn({ name: 'gather' }));
 */
export function fanIn<Item, Output>(
  spec: FanInSpec,
): Stage<BranchResult<Item, Output>[], Gathered<Item, Output>> {
  const name = checkStageName(spec.name, 'fanIn');
  if (spec.minSucceeded !== undefined && (!Number.isInteger(spec.minSucceeded) || spec.minSucceeded < 0))
    throw new ConfigurationError(
      `fanIn ${name}.minSucceeded`,
      `must be an integer ≥ 0, got ${String(spec.minSucceeded)}`,
    );
  return {
    name,
    kind: 'fan-in',
    run(results, path, run) {
      return run.composite('fan-in', path, async (): Promise<StageResult<Gathered<Item, Output>>> => {
        const gathered: Gathered<Item, Output> = { outputs: [], items: [], failed: [] };
        for (const result of results) {
          if (result.status === 'ok') {
            gathered.outputs.push(result.output);
            gathered.items.push(result.item);
          } else gathered.failed.push({ index: result.index, item: result.item, failure: result.failure });
        }
        const required = spec.minSucceeded ?? results.length;
        if (gathered.outputs.length < required)
          return {
            ok: false,
            failure: {
              kind: 'insufficient_branches',
              stage: path,
              succeeded: gathered.outputs.length,
              required,
              failed: gathered.failed.map(({ index, failure }) => ({ index, failure })),
            },
          };
        return { ok: true, output: gathered };
      });
    },
  };
}
