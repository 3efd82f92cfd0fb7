import type { JobBudget } from '../budget/job-budget.js';
import { PriceMemo, type PriceTable } from '../controls/price.js';
import { errorInfo } from '../errors/error-info.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { Usage } from '../model/model.js';
import { type Clock, type IdGenerator, randomIds, systemClock } from '../time/clock.js';
import { approxTokenEstimator, type TokenEstimator } from '../tokens/token-estimator.js';
import type { Actor } from '../tools/define-tool.js';
import type { TraceSink } from '../trace/sink.js';
import { neverAborted } from './abortable.js';
import type { PipelineOutcome } from './pipeline-outcome.js';
import { PipelineRun } from './pipeline-run.js';
import type { Stage } from './stage.js';
import type { StageStore } from './stage-store.js';
import { isCheckpointStale } from './stale-stage.js';

/** Options for {@link runPipeline}. */
export interface PipelineOptions {
  /** @default generateId('pipeline'). Pass the same id with the same store to resume. */
  runId?: string;
  /** Where trace events go: the loop's format, so `reins trace show` reads a pipeline's trace. */
  trace?: TraceSink | readonly TraceSink[];
  /**
   * Keeps each completed stage's output (JSON); a pipeline run again with the same `runId` and
   * store restores them instead of running those stages again. @default none
   */
  checkpoint?: StageStore;
  /** The job's budget: every model stage reserves its call's maximum before it is made. @default none */
  jobBudget?: JobBudget;
  /** The pipeline's name on the job's bill. @default `pipeline:<root stage name>` */
  spender?: string;
  /** Aborting ends the pipeline `cancelled` at the stage that was running. */
  signal?: AbortSignal;
  /** Prices by model id, for the cost figures. */
  prices?: PriceTable;
  /** Sizes model stages' prefills for the job budget's reservations. @default approxTokenEstimator */
  estimator?: TokenEstimator;
  /** The end user the pipeline acts for: handed to function stages (and so to sub-agents). */
  actor?: Actor;
  /** @default systemClock */
  clock?: Clock;
  /** @default random UUIDs */
  generateId?: IdGenerator;
}

/** How a pipeline went: its labeled outcome and its bill. */
export interface PipelineResult<Output> {
  runId: string;
  outcome: PipelineOutcome<Output>;
  /** Model calls made by this run (restored stages made none). */
  modelCalls: number;
  billedTokens: number;
  costUsd: number;
  usage: Usage;
  /** Stages restored from the store instead of run (a resume). */
  restoredStages: number;
}

/**
 * Runs a pipeline (a stage built from `chain`, `route`, `fanOut`/`fanIn`, `modelStage` and `step`)
 * to one labeled outcome. Never rejects for how it ends; throws `ConfigurationError` for invalid
 * options. The same controls as the loop: the job budget before each model call, a trace in the
 * loop's format, per-stage checkpoints (a resumed run never runs a completed stage again; a
 * second resume of the same run gets `stale_state` with nothing run), cancellation by signal.
 *
 * @example
 * import { chain, runPipeline, step } from 'reins/pipeline';
 * const pipeline = chain('shout', step('trim', (s: string) => s.trim()), step('upper', (s: string) => s.toUpperCase()));
 * const result = await runPipeline(pipeline, '  hello ');
 * if (result.outcome.kind === 'completed') console.log(result.outcome.output); // HELLO
 */
export async function runPipeline<Input, Output>(
  pipeline: Stage<Input, Output>,
  input: Input,
  options: PipelineOptions = {},
): Promise<PipelineResult<Output>> {
  if (typeof pipeline?.run !== 'function')
    throw new ConfigurationError('pipeline', 'must be a stage from chain, route, fanOut, modelStage or step');
  const clock = options.clock ?? systemClock;
  const runId = options.runId ?? (options.generateId ?? randomIds)('pipeline');
  if (typeof runId !== 'string' || runId === '')
    throw new ConfigurationError('runId', 'must be a non-empty string');
  const sinks =
    options.trace === undefined
      ? []
      : Array.isArray(options.trace)
        ? options.trace
        : [options.trace as TraceSink];
  const store = options.checkpoint;
  if (store !== undefined && (typeof store.load !== 'function' || typeof store.commit !== 'function'))
    throw new ConfigurationError('checkpoint', 'must be a StageStore (load, commit)');
  const record = store ? await store.load(runId) : undefined;
  const restored = record?.outputs ?? {};
  const restoredCount = Object.keys(restored).length;
  const spender = options.spender ?? `pipeline:${pipeline.name}`;
  let seq = 0;
  for (const sink of sinks) seq = Math.max(seq, (await sink.nextSeq?.(runId)) ?? 0);
  const run = new PipelineRun(
    {
      runId,
      spender,
      sinks,
      clock,
      jobBudget: options.jobBudget,
      store,
      prices: options.prices ? new PriceMemo(options.prices) : undefined,
      estimator: options.estimator ?? approxTokenEstimator,
      actor: options.actor,
    },
    seq,
    record?.revision ?? 0,
    restored,
  );
  const ended = (outcome: PipelineOutcome<Output>): PipelineResult<Output> => ({
    runId,
    outcome,
    modelCalls: run.modelCalls,
    billedTokens: run.billedTokens,
    costUsd: run.costUsd,
    usage: run.usage,
    restoredStages: restoredCount,
  });
  try {
    await run.claim();
  } catch (thrown) {
    // Refused before anything ran: no trace either.
    if (isCheckpointStale(thrown))
      return ended({
        kind: 'stale_state',
        revision: thrown.revision,
        currentRevision: thrown.currentRevision,
      });
    throw thrown;
  }
  let outcome: PipelineOutcome<Output>;
  try {
    if (run.tracing)
      await run.emit({
        type: 'pipeline-start',
        pipeline: pipeline.name,
        input: input as unknown,
        // Each claim and each stored stage took one revision: the claims before this one are resumes.
        segment: (record?.revision ?? 0) - restoredCount,
        completedStages: restoredCount,
        spender,
      });
    const result = await pipeline.run(input, pipeline.name, run, options.signal ?? neverAborted);
    outcome = result.ok ? { kind: 'completed', output: result.output } : result.failure;
  } catch (thrown) {
    if (isCheckpointStale(thrown))
      outcome = { kind: 'stale_state', revision: thrown.revision, currentRevision: thrown.currentRevision };
    // A sink or store that threw: the pipeline cannot be reproduced or resumed, so it stops here.
    else outcome = { kind: 'stage_error', stage: pipeline.name, error: errorInfo(thrown) };
  }
  try {
    if (run.tracing) {
      await run.emit({
        type: 'pipeline-end',
        outcome: outcome as PipelineOutcome<unknown>,
        modelCalls: run.modelCalls,
        billedTokens: run.billedTokens,
        costUsd: run.costUsd,
        usage: run.usage,
      });
      for (const sink of sinks) await sink.flush?.();
    }
  } catch (thrown) {
    if (outcome.kind === 'completed')
      outcome = { kind: 'stage_error', stage: pipeline.name, error: errorInfo(thrown) };
  }
  return ended(outcome);
}
