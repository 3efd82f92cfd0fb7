import type { CheckpointDelta } from '../../checkpoint/checkpoint-delta.js';
import type { CheckpointCommit } from '../../checkpoint/checkpoint-store.js';
import {
  type DeltaScalars,
  scalarsOf,
  statsSince,
  traceSince,
  usageSince,
  writeScalarsSince,
} from '../../checkpoint/delta-fields.js';
import { driftSince } from '../../checkpoint/drift-slide.js';
import { runStateJson, TranscriptJson, withMember } from '../../checkpoint/transcript-json.js';
import type { Usage } from '../../model/model.js';
import { type LoopState, toRunState } from '../loop-state.js';
import type { Outcome } from '../outcome.js';
import type { RunState, ToolStats, TraceCursor } from '../run-state.js';

/** Until the last snapshot is this long (JSON characters), deltas may add up to this much before the next. */
const snapshotFloorChars = 8_000;

/** What the last checkpoint holds, so the next one writes only what changed since. */
export interface Committed {
  /** Lengths of the lists that only grow. */
  messages: number;
  terminalFailures: number;
  handoffs: number;
  contextEdits: number;
  trustedValues: number;
  privateValues: number;
  /** Values as last written, to leave out what did not change. */
  scalars: DeltaScalars;
  usage: Usage;
  trace: TraceCursor;
  toolStats: Map<string, ToolStats>;
  untrustedResults: number;
  counters: [string, number][];
  drift: RunState['drift'];
  /** Each committed message's JSON, made once for this segment's deltas and snapshots. */
  transcript: TranscriptJson;
  /** JSON characters of the deltas since the last snapshot, and of that snapshot. */
  deltaChars: number;
  snapshotChars: number;
}

/**
 * A delta of what changed since the last checkpoint, or a snapshot: when this segment has none yet,
 * a list it keeps shrank, or the deltas since the last snapshot would outweigh it in JSON (so `load`
 * reads at most about twice the state). A snapshot joins the messages' JSON made for the deltas, so
 * rewriting it costs a copy of the transcript and a serialization of the rest.
 */
export function writeOf(
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
    (state.window?.edits.length ?? 0) < last.contextEdits ||
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
  const toolStats = new Map<string, ToolStats>();
  for (const tool in state.toolStats) toolStats.set(tool, { ...(state.toolStats[tool] as ToolStats) });
  state.committed = {
    messages: state.messages.length,
    terminalFailures: state.terminalList.length,
    handoffs: state.handoffs.length,
    contextEdits: state.window?.edits.length ?? 0,
    trustedValues: state.taint.trustedValueCount,
    privateValues: state.taint.privateValueCount,
    scalars: scalarsOf(snapshot),
    usage: { ...snapshot.usage },
    trace: snapshot.trace as TraceCursor,
    toolStats,
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
  const delta: CheckpointDelta = { revision };
  const scalars: DeltaScalars = {
    status,
    step: state.completedSteps,
    completedMessages: state.completedMessages,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
    contextTokens: state.contextTokens,
    toolErrors: state.toolErrors,
    elapsedMs: Math.max(0, now - state.startedAt),
    updatedAt: now,
  };
  writeScalarsSince(delta, last.scalars, scalars);
  last.scalars = scalars;
  const usage = usageSince(last.usage, state.usage);
  if (usage) {
    delta.usage = usage;
    last.usage = { ...state.usage };
  }
  const cursor = state.trace.cursor();
  const trace = traceSince(last.trace, cursor);
  if (trace) {
    delta.trace = trace;
    last.trace = cursor;
  }
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
    const toolStats = toolStatsSince(state, last);
    if (toolStats) delta.toolStats = toolStats;
  }
  if (state.handoffs.length > last.handoffs) {
    delta.handoffs = { from: last.handoffs, items: state.handoffs.slice(last.handoffs) };
    last.handoffs = state.handoffs.length;
  }
  const edits = state.window?.edits;
  if (edits && edits.length > last.contextEdits) {
    delta.contextEdits = { from: last.contextEdits, items: edits.slice(last.contextEdits) };
    last.contextEdits = edits.length;
  }
  let body = JSON.stringify(delta);
  // The new messages go in last, as the JSON each message gets once (kept for the snapshots after).
  if (state.messages.length > last.messages) {
    const from = last.messages;
    const items = last.transcript.since(state.messages, from);
    delta.messages = { from, items: state.messages.slice(from) };
    // Concatenated, not joined: the store's copy shares the transcript's strings until it writes.
    let itemsJson = items[0] as string;
    for (let i = 1; i < items.length; i++) itemsJson += `,${items[i]}`;
    body = withMember(body, `"messages":{"from":${from},"items":[${itemsJson}]}`);
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

/** The stats that changed, per tool marked changed since `last` (which moves on). */
function toolStatsSince(state: LoopState, last: Committed): CheckpointDelta['toolStats'] {
  // Null prototype: a tool named `__proto__` is a key, not a prototype.
  let out: Record<string, Partial<ToolStats>> | undefined;
  for (const tool of state.changedStats) {
    const stats = state.toolStats[tool] as ToolStats;
    const changed = statsSince(last.toolStats.get(tool), stats);
    if (!changed) continue;
    out ??= Object.create(null) as Record<string, Partial<ToolStats>>;
    out[tool] = changed;
    last.toolStats.set(tool, { ...stats });
  }
  state.changedStats.clear();
  return out;
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
