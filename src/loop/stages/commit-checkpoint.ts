import type { CheckpointDelta } from '../../checkpoint/checkpoint-delta.js';
import {
  type CheckpointCommit,
  isRevisionedStore,
  type LegacyCheckpointStore,
} from '../../checkpoint/checkpoint-store.js';
import { driftSince } from '../../checkpoint/drift-slide.js';
import { runStateJson, TranscriptJson, withMember } from '../../checkpoint/transcript-json.js';
import { errorInfo } from '../../errors/error-info.js';
import { type Guarded, guard } from '../boundary.js';
import { type Committed, type LoopState, toRunState } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';
import type { RunState, ToolStats } from '../run-state.js';

/**
 * This process's memory of the last revision each run reached, for runs without a revisioned store:
 * a second resume of a state this process already continued is refused. Bounded; oldest first out.
 */
const resumedHere = new Map<string, { revision: number; running: boolean }>();
const resumedHereLimit = 10_000;

function remember(runId: string, revision: number, running: boolean): void {
  resumedHere.delete(runId);
  resumedHere.set(runId, { revision, running });
  if (resumedHere.size > resumedHereLimit) resumedHere.delete(resumedHere.keys().next().value as string);
}

/** Until the last snapshot is this long (JSON characters), deltas may add up to this much before the next. */
const snapshotFloorChars = 8_000;

/**
 * Claim the run before this segment's first model call or tool execution: the next revision,
 * compare-and-set against the store (or this process's memory without one). A resume that only
 * re-pauses runs nothing and claims nothing, so the same paused state can be looked at again; a
 * second resume that would run something ends `stale_state`. Held trace events are written once
 * the claim holds.
 */
export function ensureClaimed(state: LoopState): void | Promise<void> {
  if (state.claimed) return;
  return claim(state);
}

async function claim(state: LoopState): Promise<void> {
  const refused = await claimRun(state);
  if (refused) throw new LoopStop(refused, 'before-call');
  state.claimed = true;
  await state.trace.release();
}

async function claimRun(state: LoopState): Promise<Outcome | undefined> {
  const { setup } = state;
  const store = setup.checkpoint;
  if (!store || !isRevisionedStore(store)) {
    const seen = resumedHere.get(setup.runId);
    // Refused: a state older than this process's latest for the run, or one a live segment holds.
    // A store that does not keep `revision` hands back states this process cannot tell apart: allowed.
    if (
      setup.resumed &&
      setup.state.revision !== undefined &&
      seen !== undefined &&
      (seen.revision !== state.revision || seen.running)
    )
      return { kind: 'stale_state', revision: state.revision, currentRevision: null };
  }
  if (!store || !isRevisionedStore(store)) {
    // No compare-and-set to claim with: this process's memory is the claim; the first write is the step's.
    remember(setup.runId, state.revision, true);
    return undefined;
  }
  const refused = await commit(state, 'running', null, true);
  if (refused)
    return { kind: 'stale_state', revision: state.revision, currentRevision: refused.currentRevision };
  return undefined;
}

/** The step's checkpoint: what changed since the last one. */
export function commitStep(state: LoopState): void | Promise<void> {
  const refused = commit(state, 'running', null, false);
  if (refused instanceof Promise) return refused.then((answer) => stepCommitted(state, answer));
  stepCommitted(state, refused);
}

function stepCommitted(state: LoopState, refused: Refusal | undefined): void {
  if (refused)
    throw new LoopStop(
      { kind: 'stale_state', revision: state.revision, currentRevision: refused.currentRevision },
      'after-results',
    );
}

/** The final checkpoint; a store failing now cannot change the outcome. Returns the full state. */
export async function commitEnd(state: LoopState, outcome: Outcome): Promise<RunState> {
  // A resume that ran nothing leaves the checkpoint where it was.
  if (!state.claimed) return toRunState(state, 'ended', outcome);
  try {
    await commit(state, 'ended', outcome, false);
  } catch {
    // An ended run whose final checkpoint fails resumes into the same final step.
  }
  return toRunState(state, 'ended', outcome);
}

type Refusal = { currentRevision: number };

/**
 * One checkpoint write at the next revision; a refusal comes back as a value. Synchronous when the
 * store is, so a step with an in-memory or SQLite store pays no promise for its checkpoint.
 */
function commit(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  claim: boolean,
): Refusal | undefined | Promise<Refusal | undefined> {
  const { setup } = state;
  const store = setup.checkpoint;
  const revision = state.revision + 1;
  if (!store || !isRevisionedStore(store)) {
    if (store) return saveWhole(state, store, status, outcome, revision);
    state.revision = revision;
    if (setup.exactlyOnce) remember(setup.runId, revision, status === 'running');
    return undefined;
  }
  let write: CheckpointCommit;
  try {
    write = writeOf(state, status, outcome, revision, claim);
  } catch (thrown) {
    // What cannot be serialized cannot be checkpointed: the store's failure, as if it had thrown.
    state.committed = undefined;
    throw new LoopStop(
      { kind: 'hard_error', source: 'checkpoint', error: errorInfo(thrown) },
      'after-results',
    );
  }
  const result = guard('checkpoint', () => store.commit(write), state.run.signal);
  return result instanceof Promise
    ? result.then((answer) => settled(state, revision, answer))
    : settled(state, revision, result);
}

/** The older contract: the whole state on every save. */
async function saveWhole(
  state: LoopState,
  store: LegacyCheckpointStore,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
): Promise<undefined> {
  const full = toRunState(state, status, outcome);
  full.revision = revision;
  const saved = await guard('checkpoint', () => store.save(full), state.run.signal);
  if (!saved.ok) throw LoopStop.from(saved, 'after-results');
  state.revision = revision;
  if (state.setup.exactlyOnce) remember(state.setup.runId, revision, status === 'running');
  return undefined;
}

/** The store's answer to a write: the new revision, a refusal, or the run's end. */
function settled(state: LoopState, revision: number, result: Guarded<unknown>): Refusal | undefined {
  // Whatever the store did with a write it did not take, the next one is a whole snapshot.
  if (!result.ok) {
    state.committed = undefined;
    throw LoopStop.from(result, 'after-results');
  }
  let ok: unknown;
  let current: unknown;
  try {
    const answer = result.value as { ok?: unknown; currentRevision?: unknown } | undefined;
    ok = answer?.ok;
    current = answer?.currentRevision;
  } catch (thrown) {
    state.committed = undefined;
    throw new LoopStop(
      { kind: 'hard_error', source: 'checkpoint', error: errorInfo(thrown) },
      'after-results',
    );
  }
  if (ok === true) {
    state.revision = revision;
    return undefined;
  }
  state.committed = undefined;
  if (ok !== false)
    throw new LoopStop(
      {
        kind: 'hard_error',
        source: 'checkpoint',
        error: {
          name: 'InvalidCommit',
          message: 'checkpoint.commit() must return { ok: true } or { ok: false, currentRevision }',
        },
      },
      'after-results',
    );
  return { currentRevision: typeof current === 'number' ? current : -1 };
}

/**
 * A delta of what changed since the last checkpoint, or a snapshot: when this segment has none yet,
 * a list it keeps shrank, or the deltas since the last snapshot would outweigh it in JSON (so `load`
 * reads at most about twice the state). A snapshot joins the messages' JSON made for the deltas, so
 * rewriting it costs a copy of the transcript and a serialization of the rest.
 */
function writeOf(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
  claim: boolean,
): CheckpointCommit {
  const last = state.committed;
  if (
    claim ||
    last === undefined ||
    state.messages.length < last.messages ||
    state.terminalList.length < last.terminalFailures ||
    state.handoffs.length < last.handoffs ||
    state.taint.trustedValueCount < last.trustedValues ||
    state.taint.privateValueCount < last.privateValues
  )
    return snapshotOf(state, status, outcome, revision, last?.transcript);
  const write = deltaOf(state, last, status, outcome, revision);
  const chars = (write.body as string).length;
  if (last.deltaChars + chars > Math.max(last.snapshotChars, snapshotFloorChars))
    return snapshotOf(state, status, outcome, revision, last.transcript);
  last.deltaChars += chars;
  return write;
}

function snapshotOf(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
  transcript = new TranscriptJson(),
): CheckpointCommit {
  const snapshot = toRunState(state, status, outcome);
  snapshot.revision = revision;
  state.repeats?.takeChanges();
  state.changedStats.clear();
  const body = runStateJson(snapshot, transcript);
  const taint = snapshot.taint as NonNullable<RunState['taint']>;
  state.committed = {
    messages: state.messages.length,
    terminalFailures: state.terminalList.length,
    handoffs: state.handoffs.length,
    trustedValues: state.taint.trustedValueCount,
    privateValues: state.taint.privateValueCount,
    untrustedResults: taint.untrustedResults,
    counters: taint.counters ?? [],
    drift: snapshot.drift,
    transcript,
    deltaChars: 0,
    snapshotChars: body.length,
  };
  return {
    runId: state.setup.runId,
    expectedRevision: state.revision,
    revision,
    status,
    step: state.completedSteps,
    updatedAt: snapshot.updatedAt,
    // The snapshot's lists are the live ones: a store that does not take `body` serializes before it resolves.
    snapshot,
    body,
  };
}

/** What changed since `last`, which it moves on to this write. */
function deltaOf(
  state: LoopState,
  last: Committed,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
): CheckpointCommit {
  const now = state.setup.clock.now();
  const delta: CheckpointDelta = {
    revision,
    status,
    step: state.completedSteps,
    completedMessages: state.completedMessages,
    usage: state.usage,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
    contextTokens: state.contextTokens,
    toolErrors: state.toolErrors,
    elapsedMs: Math.max(0, now - state.startedAt),
    updatedAt: now,
    trace: state.trace.cursor(),
  };
  if (outcome !== null) delta.outcome = outcome;
  if (state.pending !== null) delta.pending = state.pending;
  if (state.drift) {
    const drift = state.drift.state();
    const moved = driftSince(last.drift, drift);
    if (moved.driftSlide) delta.driftSlide = moved.driftSlide;
    else if (moved.drift !== undefined) delta.drift = moved.drift;
    last.drift = drift;
  }
  const repeatCounts = state.repeats?.takeChanges();
  if (repeatCounts !== undefined && repeatCounts.length > 0) delta.repeatCounts = repeatCounts;
  const taint = taintSince(state, last);
  if (taint) delta.taint = taint;
  if (state.terminalList.length > last.terminalFailures) {
    delta.terminalFailures = {
      from: last.terminalFailures,
      items: state.terminalList.slice(last.terminalFailures),
    };
    last.terminalFailures = state.terminalList.length;
  }
  if (state.changedStats.size > 0) {
    // Null prototype: a tool named `__proto__` is a key, not a prototype.
    const toolStats = Object.create(null) as Record<string, ToolStats>;
    for (const tool of state.changedStats) toolStats[tool] = state.toolStats[tool] as ToolStats;
    state.changedStats.clear();
    delta.toolStats = toolStats;
  }
  if (state.handoffs.length > last.handoffs) {
    delta.handoffs = { from: last.handoffs, items: state.handoffs.slice(last.handoffs) };
    last.handoffs = state.handoffs.length;
  }
  let body = JSON.stringify(delta);
  // The new messages go in last, as the JSON each message gets once (kept for the snapshots after).
  if (state.messages.length > last.messages) {
    const from = last.messages;
    const items = last.transcript.since(state.messages, from);
    delta.messages = { from, items: state.messages.slice(from) };
    body = withMember(body, 'messages', `{"from":${from},"items":[${items.join(',')}]}`);
    last.messages = state.messages.length;
  }
  return {
    runId: state.setup.runId,
    expectedRevision: state.revision,
    revision,
    status,
    step: state.completedSteps,
    updatedAt: now,
    delta,
    body,
  };
}

/** The taint ledger's changes since `last` (which moves on), or undefined when it has none. */
function taintSince(state: LoopState, last: Committed): CheckpointDelta['taint'] {
  const ledger = state.taint;
  const counters = ledger.counters();
  const countersChanged = !sameEntries(last.counters, counters);
  if (
    !countersChanged &&
    ledger.untrustedResults === last.untrustedResults &&
    ledger.trustedValueCount === last.trustedValues &&
    ledger.privateValueCount === last.privateValues
  )
    return undefined;
  const taint: NonNullable<CheckpointDelta['taint']> = { untrustedResults: ledger.untrustedResults };
  if (ledger.trustedValueCount > last.trustedValues) {
    taint.trustedValues = { from: last.trustedValues, items: ledger.trustedValuesFrom(last.trustedValues) };
    last.trustedValues = ledger.trustedValueCount;
  }
  if (ledger.privateValueCount > last.privateValues) {
    taint.privateValues = { from: last.privateValues, items: ledger.privateValuesFrom(last.privateValues) };
    last.privateValues = ledger.privateValueCount;
  }
  if (countersChanged) {
    taint.counters = counters;
    last.counters = counters;
  }
  last.untrustedResults = ledger.untrustedResults;
  return taint;
}

function sameEntries(before: readonly [string, number][], after: readonly [string, number][]): boolean {
  if (before.length !== after.length) return false;
  for (let i = 0; i < before.length; i++) {
    const [key, count] = before[i] as [string, number];
    const [nextKey, nextCount] = after[i] as [string, number];
    if (key !== nextKey || count !== nextCount) return false;
  }
  return true;
}
