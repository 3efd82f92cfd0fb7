import type { JobBudget } from '../budget/job-budget.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { Actor } from '../tools/define-tool.js';
import type { StageFailure } from './pipeline-outcome.js';
import type { PipelineRun } from './pipeline-run.js';

/** What a stage settles to: its output, or the failure that stops the pipeline. */
export type StageResult<Output> = { ok: true; output: Output } | { ok: false; failure: StageFailure };

/** What a function stage is handed besides its input. */
export interface StageContext {
  /** Aborted on cancellation or the stage's timeout: pass it to every await. */
  signal: AbortSignal;
  runId: string;
  /** This stage's path (`nightly/summarize`). */
  stage: string;
  /** The job's budget, if the pipeline was given one: charge your own model calls to it. */
  jobBudget: JobBudget | undefined;
  /** This stage's name on the job's bill. */
  spender: string;
  actor: Actor | undefined;
}

/** The kinds of stage, as the trace names them. */
export type StageKind = 'function' | 'model' | 'chain' | 'route' | 'fan-out' | 'fan-in';

/**
 * One step of a pipeline: a function, a model call with a schema, or a composition of stages
 * (`chain`, `route`, `fanOut`). Build them with those functions; `runPipeline` runs one.
 */
export interface Stage<Input, Output> {
  readonly name: string;
  readonly kind: StageKind;
  /**
   * Runs the stage at `path` under `run` (its trace, budget, store and signal). Never rejects for
   * how the stage ends. Internal to reins's pipeline: call `runPipeline`.
   */
  run(input: Input, path: string, run: PipelineRun, signal: AbortSignal): Promise<StageResult<Output>>;
}

/** Any stage, whatever its types: for lists of stages (a chain built from an array). */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous stage list needs open input and output types
export type AnyStage = Stage<any, any>;

/** A stage's path under its parent. */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}/${name}`;
}

const stageNamePattern = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Stage names become trace paths and store keys: short, no slashes, no brackets. */
export function checkStageName(name: unknown, where: string): string {
  if (typeof name !== 'string' || !stageNamePattern.test(name))
    throw new ConfigurationError(where, `a stage name must match ${stageNamePattern}, got ${String(name)}`);
  return name;
}
