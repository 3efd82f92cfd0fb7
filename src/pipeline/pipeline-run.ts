import type { JobBudget } from '../budget/job-budget.js';
import type { PriceMemo } from '../controls/price.js';
import { errorInfo } from '../errors/error-info.js';
import { addUsage, emptyUsage, type Usage } from '../model/model.js';
import type { Clock } from '../time/clock.js';
import type { TokenEstimator } from '../tokens/token-estimator.js';
import type { Actor } from '../tools/define-tool.js';
import { type TraceEvent, type TraceEventBody, traceVersion } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import type { StageFailure } from './pipeline-outcome.js';
import type { StageKind, StageResult } from './stage.js';
import type { StageCommit, StageStore } from './stage-store.js';
import { isCheckpointStale, StaleStage } from './stale-stage.js';

/** What a pipeline run was set up with; nothing in it changes while it runs. */
export interface PipelineSetup {
  runId: string;
  spender: string;
  sinks: readonly TraceSink[];
  clock: Clock;
  jobBudget: JobBudget | undefined;
  store: StageStore | undefined;
  prices: PriceMemo | undefined;
  estimator: TokenEstimator;
  actor: Actor | undefined;
}

/**
 * One pipeline run's shared state: the trace's `seq`, the stage store's revision and restored
 * outputs, the bill. Stages read and write it through these methods; with no sink, no store and no
 * job budget each method is a branch and a return.
 */
export class PipelineRun {
  readonly setup: PipelineSetup;
  /** Model calls made, for `step` in `model-response` events. */
  modelCalls = 0;
  usage: Usage = emptyUsage();
  billedTokens = 0;
  costUsd = 0;
  #seq: number;
  #revision: number;
  readonly #restored: Readonly<Record<string, string>>;

  constructor(
    setup: PipelineSetup,
    seq: number,
    revision: number,
    restored: Readonly<Record<string, string>>,
  ) {
    this.setup = setup;
    this.#seq = seq;
    this.#revision = revision;
    this.#restored = restored;
  }

  get tracing(): boolean {
    return this.setup.sinks.length > 0;
  }

  /** Stamps and writes an event to every sink (awaited: a slow sink applies back-pressure). */
  async emit(body: TraceEventBody, at: number = this.setup.clock.now()): Promise<void> {
    const event = { v: traceVersion, runId: this.setup.runId, seq: this.#seq++, at, ...body } as TraceEvent;
    for (const sink of this.setup.sinks) await sink.write(event);
  }

  /** Adds a model call's usage and cost to the pipeline's bill. */
  bill(usage: Usage, costUsd: number): void {
    this.usage = addUsage(this.usage, usage);
    this.billedTokens +=
      usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    this.costUsd += costUsd;
  }

  /**
   * A leaf stage (a function or a model call): its stored output when the stage completed before
   * (a resume; it does not run again), else `body` run, its output committed to the store, both
   * ends traced.
   */
  async leaf<O>(kind: StageKind, path: string, body: () => Promise<StageResult<O>>): Promise<StageResult<O>> {
    const stored = this.#restored[path];
    if (stored !== undefined) {
      const output = JSON.parse(stored) as O;
      if (this.tracing)
        await this.emit({ type: 'stage-end', stage: path, kind, status: 'restored', output, durationMs: 0 });
      return { ok: true, output };
    }
    if (!this.tracing && this.setup.store === undefined) return body();
    const startedAt = this.setup.clock.now();
    if (this.tracing) await this.emit({ type: 'stage-start', stage: path, kind }, startedAt);
    const result = await body();
    if (result.ok && this.setup.store !== undefined) await this.#commit(path, result.output);
    if (this.tracing) await this.#ended(path, kind, result, startedAt);
    return result;
  }

  /** A composite stage (chain, route, fan-out): both ends traced, nothing stored of its own. */
  async composite<O>(
    kind: StageKind,
    path: string,
    body: () => Promise<StageResult<O>>,
  ): Promise<StageResult<O>> {
    if (!this.tracing) return body();
    const startedAt = this.setup.clock.now();
    await this.emit({ type: 'stage-start', stage: path, kind }, startedAt);
    const result = await body();
    await this.#ended(path, kind, result, startedAt);
    return result;
  }

  async #ended<O>(path: string, kind: StageKind, result: StageResult<O>, startedAt: number): Promise<void> {
    const now = this.setup.clock.now();
    await this.emit(
      result.ok
        ? {
            type: 'stage-end',
            stage: path,
            kind,
            status: 'ok',
            output: jsonSafe(result.output),
            durationMs: now - startedAt,
          }
        : {
            type: 'stage-end',
            stage: path,
            kind,
            status: 'failed',
            failure: result.failure,
            durationMs: now - startedAt,
          },
      now,
    );
  }

  /** Claims the run in the store (compare-and-set): a second resume of the same run is refused. */
  async claim(): Promise<void> {
    const store = this.setup.store;
    if (!store) return;
    await this.#write(store, undefined, undefined);
  }

  async #commit(path: string, output: unknown): Promise<void> {
    const store = this.setup.store as StageStore;
    const text = JSON.stringify(output);
    // An output JSON cannot hold (undefined, a function) is not stored: the stage runs again on resume.
    if (text === undefined) return;
    await this.#write(store, path, text);
  }

  async #write(store: StageStore, stage: string | undefined, output: string | undefined): Promise<void> {
    const commit: StageCommit = {
      runId: this.setup.runId,
      expectedRevision: this.#revision,
      revision: this.#revision + 1,
      updatedAt: this.setup.clock.now(),
    };
    if (stage !== undefined && output !== undefined) {
      commit.stage = stage;
      commit.output = output;
    }
    const written = await store.commit(commit);
    if (!written.ok) throw new StaleStage(this.#revision, written.currentRevision);
    this.#revision += 1;
  }
}

/** A function's throw as a stage failure; a stale store write is passed on (it ends the pipeline). */
export function thrownFailure(stage: string, thrown: unknown): StageFailure {
  if (isCheckpointStale(thrown)) throw thrown;
  return { kind: 'stage_error', stage, error: errorInfo(thrown) };
}

function jsonSafe(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return String(value);
  }
}
