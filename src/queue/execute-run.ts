import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { ReinsError } from '../errors/reins-error.js';
import type { ApprovalRequest } from '../loop/approval.js';
import type { Outcome } from '../loop/outcome.js';
import { resumeAgent, runAgent } from '../loop/run-agent.js';
import type { RunResult } from '../loop/run-result.js';
import type { RunState } from '../loop/run-state.js';
import { type Clock, systemClock } from '../time/clock.js';
import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import type { AgentRegistry } from './agent-definition.js';
import { RunEventSink } from './run-event-sink.js';
import type { RunRecord, RunRecordStatus } from './run-queue.js';
import type { RunEventStore, RunJob, RunProgress, RunRecordStore } from './run-stores.js';

/** What {@link executeRun} needs: the same on every worker. */
export interface RunExecutorOptions {
  agents: AgentRegistry;
  /** Shared by every worker: a resumed run continues from the last step committed here. */
  checkpoint: AnyCheckpointStore;
  registry: RunRecordStore;
  events: RunEventStore;
  /** Further sinks for every run (a JSONL file, OpenTelemetry). */
  trace?: readonly TraceSink[];
  /** @default systemClock */
  clock?: Clock;
  /**
   * Failures of the stores' connection that the job engine should retry instead of ending the
   * run: a run whose trace or checkpoint write failed with one of these makes `executeRun` throw
   * (its record untouched, still `running`), so the job is handed out again and the run resumes
   * from its last checkpoint. For stores that can lose a statement to a restart (PostgreSQL); a
   * Redis client queues its commands across a reconnect instead.
   * @default none: every such failure ends the run `hard_error`
   */
  retryable?: (error: { name?: string; message?: string; code?: string }) => boolean;
}

/** The signals one execution listens to. */
export interface RunSignals {
  /** A person cancelled the run: it ends `cancelled`, for good. */
  cancel?: AbortSignal;
  /**
   * The worker is shutting down: the run stops before its next step (the step in flight finishes
   * and is checkpointed) and is left to resume elsewhere.
   */
  drain?: AbortSignal;
  /** Shutting down now: the run stops at once (the step in flight runs again on resume). */
  drainNow?: AbortSignal;
}

/** How one execution of a job went. */
export type ExecuteRunResult =
  /** The run reached its terminal outcome; its record is `ended`. */
  | { kind: 'ended'; outcome: Outcome; record: RunRecord | undefined }
  /** The run paused for verdicts; its record is `awaiting_approval` and nothing of the batch ran. */
  | { kind: 'parked'; requests: ApprovalRequest[] }
  /** The worker drained: the run stopped at a checkpoint and should run again (its record is `queued`). */
  | { kind: 'interrupted' }
  /**
   * Nothing ran: the run is unknown, already ended, or another worker holds it (its checkpoint
   * revision moved on: `held_elsewhere`).
   */
  | { kind: 'skipped'; reason: 'not_found' | 'already_ended' | 'held_elsewhere' };

/**
 * Runs one job: starts the run, or resumes it from the shared checkpoint store (after a crash, a
 * drain or with a person's verdicts), writes its trace to the event log with `seq` continuing from
 * what the log holds, and keeps its record up to date. Every queue's worker calls this; it never
 * throws for how a run ends.
 *
 * @example
 * import { MemoryCheckpointStore } from 'reins';
 * import { agentRegistry, defineAgent, executeRun, MemoryRunEventLog, MemoryRunRegistry, queuedRecord } from 'reins/queue';
 * import { scriptedModel } from 'reins/testing';
 * const registry = new MemoryRunRegistry();
 * const request = { agent: 'echo', input: 'hi', actor: { id: 'ana' } };
 * await registry.create(queuedRecord('run_1', request, Date.now()));
 * const done = await executeRun({ runId: 'run_1', request }, {
 *   agents: agentRegistry([defineAgent({ name: 'echo', build: () => ({ model: scriptedModel([{ text: 'hi' }]) }) })]),
 *   checkpoint: new MemoryCheckpointStore(),
 *   registry,
 *   events: new MemoryRunEventLog(),
 * });
 */
export async function executeRun(
  job: RunJob,
  options: RunExecutorOptions,
  signals: RunSignals = {},
): Promise<ExecuteRunResult> {
  const { registry, clock = systemClock } = options;
  const { runId, request } = job;
  const definition = options.agents.get(request.agent);
  const takeable: readonly RunRecordStatus[] = ['queued', 'running', 'awaiting_approval'];
  let state: RunState | undefined;
  let attempt: number | undefined;
  if (definition && registry.start) {
    // The common case in one round trip: take the run and load its checkpoint together. A job
    // without verdicts does not take a parked run (a redelivered pause is re-parked below, as is,
    // and a person's verdict stays acceptable meanwhile); anything unusual takes the path below.
    const [started, loaded] = await Promise.all([
      registry.start(runId, clock.now(), job.verdicts ? takeable : ['queued', 'running']),
      options.checkpoint.load(runId),
    ]);
    if (started) {
      if (signals.cancel?.aborted) return ended(options, runId, cancelledBeforeRun(), undefined);
      state = loaded;
      attempt = started.attempts;
    }
  }
  if (attempt === undefined) {
    // Both reads at once: one round trip on a shared connection.
    const [record, loaded] = await Promise.all([registry.get(runId), options.checkpoint.load(runId)]);
    if (!record) return { kind: 'skipped', reason: 'not_found' };
    if (record.status === 'ended') return { kind: 'skipped', reason: 'already_ended' };
    if (record.status === 'cancelling' || signals.cancel?.aborted) {
      // Cancelled while it waited (or between a crash and this pick-up): it ends without running.
      return ended(options, runId, cancelledBeforeRun(), undefined);
    }
    if (!definition) {
      const outcome: Outcome = {
        kind: 'hard_error',
        source: 'internal',
        error: { name: 'ConfigurationError', message: `no agent definition named "${request.agent}"` },
      };
      return ended(options, runId, outcome, undefined);
    }
    state = loaded;
    if (!(state?.status === 'ended' && state.outcome?.kind === 'awaiting_approval' && !job.verdicts)) {
      attempt = record.attempts + 1;
      const started = await registry.update(
        runId,
        { status: 'running', attempts: attempt, updatedAt: clock.now() },
        takeable,
      );
      if (!started) {
        // A cancel landed between the read above and this write.
        if ((await registry.get(runId))?.status === 'cancelling')
          return ended(options, runId, cancelledBeforeRun(), undefined);
        return { kind: 'skipped', reason: 'already_ended' };
      }
    } else attempt = record.attempts;
  }
  if (!definition) return { kind: 'skipped', reason: 'not_found' };
  if (state?.status === 'ended' && state.outcome?.kind === 'awaiting_approval' && !job.verdicts) {
    // A redelivered pause: park it again without opening a new trace segment.
    return parked(options, runId, state.outcome.requests, clock);
  }
  const built = await definition.build({ runId, request, attempt });
  const { signal, dispose, drained, atStep } = runSignal(signals);
  const prepareStep = built.prepareStep;
  const runOptions: typeof built = signals.drain
    ? {
        ...built,
        // Between steps: the last step is checkpointed, the next has not started.
        prepareStep: (context) => {
          atStep();
          return prepareStep?.(context);
        },
      }
    : built;
  const sink = new RunEventSink({
    log: options.events,
    runId,
    writeBehind: options.events.orderedBefore?.(options.checkpoint) === true,
    ...(options.events.recordsProgress?.(registry) === true
      ? { progress: (events: readonly TraceEvent[]) => progressOf(events, clock) }
      : { onAppend: (events: readonly TraceEvent[]) => progress(options, runId, events, clock) }),
  });
  const common = {
    actor: request.actor,
    checkpoint: options.checkpoint,
    trace: [sink, ...(options.trace ?? [])],
    signal,
    clock,
  };
  let result: RunResult;
  try {
    result = state
      ? await resumeAgent(state, {
          ...runOptions,
          ...common,
          ...(job.verdicts ? { approvals: job.verdicts } : {}),
        })
      : await runAgent({ ...runOptions, ...common, input: request.input, runId });
  } finally {
    dispose();
    // A cancel or drain stops the loop waiting for its sinks: the last writes land before the end marker.
    await sink.drained();
  }
  const { outcome } = result;
  if (
    sink.failure !== undefined &&
    outcome.kind !== 'hard_error' &&
    (await heldElsewhere(options.checkpoint, runId, result.state.revision))
  )
    // The log refused this worker's last events and the checkpoint moved on: another worker holds
    // the run (this one's lock lapsed during its last step). It must not end the run under it.
    return { kind: 'skipped', reason: 'held_elsewhere' };
  if (outcome.kind === 'stale_state') return { kind: 'skipped', reason: 'held_elsewhere' };
  if (
    outcome.kind === 'hard_error' &&
    (outcome.source === 'trace' || outcome.source === 'checkpoint') &&
    options.retryable?.(outcome.error) === true
  )
    // The store's connection went with a write in flight: not the run's end. The job engine
    // retries the job; the run resumes from its last checkpoint (the step in flight runs again).
    throw new ReinsError(
      'store_unavailable',
      `run ${runId}: ${outcome.source} write failed: ${outcome.error.message}`,
    );
  if (
    outcome.kind === 'hard_error' &&
    (outcome.source === 'trace' || outcome.source === 'checkpoint') &&
    (await heldElsewhere(options.checkpoint, runId, result.state.revision))
  )
    // A worker that lost its run (its lock lapsed and another claimed it) stops without a word.
    return { kind: 'skipped', reason: 'held_elsewhere' };
  if (outcome.kind === 'awaiting_approval') return parked(options, runId, outcome.requests, clock, result);
  if (outcome.kind === 'cancelled' && drained() && !signals.cancel?.aborted) {
    await registry.update(runId, { status: 'queued', updatedAt: clock.now() }, ['running']);
    return { kind: 'interrupted' };
  }
  return ended(options, runId, outcome, result);
}

/** The outcome of a run cancelled before this execution ran anything. */
function cancelledBeforeRun(): Outcome {
  return { kind: 'cancelled', reason: 'cancelled before it ran again' };
}

/**
 * One signal for the run: a cancel aborts it at once, `drainNow` too, and `drain` at the next step
 * boundary (`atStep`, called before each model call). `drained()` says whether a drain stopped it.
 */
function runSignal(signals: RunSignals): {
  signal: AbortSignal;
  dispose: () => void;
  drained: () => boolean;
  atStep: () => void;
} {
  const controller = new AbortController();
  const cleanups: (() => void)[] = [];
  let drained = false;
  const link = (parent: AbortSignal | undefined, onAbort: () => void) => {
    if (!parent) return;
    if (parent.aborted) onAbort();
    else {
      parent.addEventListener('abort', onAbort, { once: true });
      cleanups.push(() => parent.removeEventListener('abort', onAbort));
    }
  };
  const drainNow = () => {
    drained = true;
    controller.abort('worker shutting down');
  };
  link(signals.cancel, () => controller.abort('cancelled'));
  link(signals.drainNow, drainNow);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const cleanup of cleanups) cleanup();
    },
    drained: () => drained,
    atStep: () => {
      if (signals.drain?.aborted && !controller.signal.aborted) drainNow();
    },
  };
}

/** True when the store's checkpoint has moved past the revision this execution ended at. */
async function heldElsewhere(
  checkpoint: AnyCheckpointStore,
  runId: string,
  revision: number | undefined,
): Promise<boolean> {
  try {
    const latest = await checkpoint.load(runId);
    return latest?.revision !== undefined && revision !== undefined && latest.revision > revision;
  } catch {
    return false;
  }
}

/** The record's figures after a batch: from its last `step-end`, if it has one. */
function progressOf(events: readonly TraceEvent[], clock: Clock): RunProgress | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as TraceEvent;
    if (event.type !== 'step-end') continue;
    return {
      steps: event.step,
      billedTokens: event.billedTokens,
      costUsd: event.costUsd,
      updatedAt: clock.now(),
    };
  }
  return undefined;
}

/** Keeps the record's step count and bill current as each step's events land. */
async function progress(
  options: RunExecutorOptions,
  runId: string,
  events: readonly TraceEvent[],
  clock: Clock,
): Promise<void> {
  const figures = progressOf(events, clock);
  if (figures) await options.registry.update(runId, figures);
}

async function parked(
  options: RunExecutorOptions,
  runId: string,
  requests: ApprovalRequest[],
  clock: Clock,
  result?: RunResult,
): Promise<ExecuteRunResult> {
  const parkedRecord = await options.registry.update(
    runId,
    {
      status: 'awaiting_approval',
      outcome: { kind: 'awaiting_approval', requests },
      pendingApprovals: requests,
      updatedAt: clock.now(),
      ...(result ? figures(result) : {}),
    },
    // Only a run still running (or parked already, redelivered) parks: a cancel acknowledged while
    // the pause was being committed must not be undone by it, or a later approval would run the call.
    ['running', 'queued', 'awaiting_approval'],
  );
  if (!parkedRecord) {
    if ((await options.registry.get(runId))?.status === 'cancelling')
      return ended(
        options,
        runId,
        { kind: 'cancelled', reason: 'cancelled while it paused for approval' },
        result,
      );
    return { kind: 'skipped', reason: 'already_ended' };
  }
  return { kind: 'parked', requests };
}

async function ended(
  options: RunExecutorOptions,
  runId: string,
  outcome: Outcome,
  result: RunResult | undefined,
): Promise<ExecuteRunResult> {
  // The record first, then the log's end marker: a follower that sees the end reads the record
  // for its closing state, and must find it ended (not `running` or `cancelling`).
  const record = await options.registry.update(runId, {
    status: 'ended',
    outcome,
    pendingApprovals: undefined,
    updatedAt: (options.clock ?? systemClock).now(),
    ...(result ? figures(result) : {}),
  });
  await options.events.end(runId);
  return { kind: 'ended', outcome, record };
}

function figures(result: RunResult) {
  return { steps: result.steps, billedTokens: result.billedTokens, costUsd: result.costUsd };
}
