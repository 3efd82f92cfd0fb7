import type { DriftState } from '../controls/drift-monitor.js';
import type { TrustedFact } from '../controls/taint-ledger.js';
import { ReinsError } from '../errors/reins-error.js';
import type { Outcome } from '../loop/outcome.js';
import type { Handoff, PendingBatch, RunState, ToolStats, TraceCursor } from '../loop/run-state.js';
import type { Message } from '../model/content.js';
import type { Usage } from '../model/model.js';

/** Items appended to a list since the last revision: the list is cut to `from`, then `items` follow. */
export interface Appended<T> {
  from: number;
  items: T[];
}

/**
 * What changed in a {@link RunState} since the previous revision. Lists that only grow (the
 * transcript, terminal failures, handoffs, trusted values) carry their new tail; maps carry their
 * changed entries; small fields are carried whole. Applying every delta in order to the last
 * snapshot gives the latest state, field for field.
 */
export interface CheckpointDelta {
  revision: number;
  status: RunState['status'];
  step: number;
  completedMessages: number;
  usage: Usage;
  billedTokens: number;
  costUsd: number;
  contextTokens: number;
  toolErrors: number;
  elapsedMs: number;
  updatedAt: number;
  outcome: Outcome | null;
  pending: PendingBatch | null;
  drift: DriftState | null;
  trace: TraceCursor;
  messages: Appended<Message>;
  /** Repeat counts that changed (set, not added). */
  repeatCounts: [string, number][];
  taint: {
    untrustedResults: number;
    trustedValues: Appended<string | TrustedFact>;
    /** Absent in deltas written before private values existed. */
    privateValues?: Appended<string>;
    /** The run-wide counts, whole (one per capped tool and plan entry). */
    counters?: [string, number][];
  } | null;
  terminalFailures: Appended<string>;
  /** Per-tool stats that changed (replaced whole). */
  toolStats: Record<string, ToolStats>;
  handoffs: Appended<Handoff>;
}

function appendTo<T>(list: T[] | undefined, appended: Appended<T>, field: string): T[] {
  const base = list ?? [];
  if (appended.from > base.length)
    throw new ReinsError(
      'corrupt_state',
      `checkpoint delta appends ${field} at ${appended.from} past ${base.length}`,
    );
  base.length = appended.from;
  for (const item of appended.items) base.push(item);
  return base;
}

/**
 * The latest state from a snapshot and the deltas committed after it, in order. Each delta must
 * follow the revision before it; a gap or a list appended past its end is `corrupt_state`.
 */
export function applyCheckpointDeltas(snapshot: RunState, deltas: Iterable<CheckpointDelta>): RunState {
  // Lists are copied once and grown in place, so replaying N deltas costs what they hold, not N².
  let state: RunState = {
    ...snapshot,
    messages: [...snapshot.messages],
    terminalFailures: [...(snapshot.terminalFailures ?? [])],
    handoffs: [...(snapshot.handoffs ?? [])],
    taint: snapshot.taint
      ? {
          ...snapshot.taint,
          trustedValues: [...snapshot.taint.trustedValues],
          ...(snapshot.taint.privateValues ? { privateValues: [...snapshot.taint.privateValues] } : {}),
        }
      : (snapshot.taint ?? null),
    // Null prototype: a tool named `__proto__` is a key, not a prototype.
    toolStats: Object.assign(Object.create(null) as Record<string, ToolStats>, snapshot.toolStats ?? {}),
  };
  let repeatCounts: Map<string, number> | undefined;
  for (const delta of deltas) {
    const expected = (state.revision ?? 0) + 1;
    if (delta.revision !== expected)
      throw new ReinsError(
        'corrupt_state',
        `checkpoint delta revision ${String(delta.revision)} does not follow revision ${expected - 1}`,
      );
    repeatCounts ??= new Map(state.repeatCounts);
    for (const [key, count] of delta.repeatCounts) repeatCounts.set(key, count);
    const toolStats = state.toolStats ?? {};
    for (const [tool, stats] of Object.entries(delta.toolStats)) toolStats[tool] = stats;
    state = {
      ...state,
      revision: delta.revision,
      status: delta.status,
      step: delta.step,
      completedMessages: delta.completedMessages,
      usage: delta.usage,
      billedTokens: delta.billedTokens,
      costUsd: delta.costUsd,
      contextTokens: delta.contextTokens,
      toolErrors: delta.toolErrors,
      elapsedMs: delta.elapsedMs,
      updatedAt: delta.updatedAt,
      outcome: delta.outcome,
      pending: delta.pending,
      drift: delta.drift,
      trace: delta.trace,
      messages: appendTo(state.messages, delta.messages, 'messages'),
      taint: delta.taint === null ? (state.taint ?? null) : appliedTaint(state.taint, delta.taint),
      terminalFailures: appendTo(state.terminalFailures, delta.terminalFailures, 'terminalFailures'),
      toolStats,
      handoffs: appendTo(state.handoffs, delta.handoffs, 'handoffs'),
    };
  }
  if (repeatCounts) state.repeatCounts = [...repeatCounts];
  return state;
}

function appliedTaint(
  taint: RunState['taint'],
  delta: NonNullable<CheckpointDelta['taint']>,
): NonNullable<RunState['taint']> {
  const next: NonNullable<RunState['taint']> = {
    untrustedResults: delta.untrustedResults,
    trustedValues: appendTo(taint?.trustedValues, delta.trustedValues, 'taint.trustedValues'),
  };
  const privateValues = delta.privateValues
    ? appendTo(taint?.privateValues, delta.privateValues, 'taint.privateValues')
    : taint?.privateValues;
  if (privateValues !== undefined) next.privateValues = privateValues;
  const counters = delta.counters ?? taint?.counters;
  if (counters !== undefined) next.counters = counters;
  return next;
}

/** Structural equality of JSON values (what a checkpoint keeps), in one pass over both. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left).filter((key) => left[key] !== undefined);
  if (keys.length !== Object.keys(right).filter((key) => right[key] !== undefined).length) return false;
  for (const key of keys) if (!jsonEqual(left[key], right[key])) return false;
  return true;
}

/** The new tail of a list: cut at the first item that differs, then what `next` has from there. */
function appendedSince<T>(previous: readonly T[] | undefined, next: readonly T[] | undefined): Appended<T> {
  const before = previous ?? [];
  const after = next ?? [];
  let from = 0;
  const common = Math.min(before.length, after.length);
  while (from < common && jsonEqual(before[from], after[from])) from++;
  return { from, items: after.slice(from) };
}

/**
 * The delta that takes `previous` to `next`, for `revision = (previous.revision ?? 0) + 1`, in one
 * pass over both (for tests and tools; the loop builds its deltas as it goes). Lists carry their
 * tail after the longest common prefix (so a truncated list is cut, then refilled); repeat counts
 * and tool stats carry the entries whose value differs. What a delta cannot say is not said: a
 * repeat count or tool stat that disappears, taint that goes back to none, or a change of `runId`,
 * `system` or `startedAt` (write a snapshot for those). A state without `trace` gets
 * `{ segment: 0, nextSeq: 0 }`.
 */
export function diffRunStates(previous: RunState, next: RunState): CheckpointDelta {
  const before = new Map(previous.repeatCounts);
  const repeatCounts: [string, number][] = [];
  for (const [key, count] of next.repeatCounts)
    if (before.get(key) !== count) repeatCounts.push([key, count]);
  const toolStats: Record<string, ToolStats> = {};
  const previousStats = previous.toolStats ?? {};
  for (const [tool, stats] of Object.entries(next.toolStats ?? {}))
    if (!jsonEqual(previousStats[tool], stats)) toolStats[tool] = stats;
  return {
    revision: (previous.revision ?? 0) + 1,
    status: next.status,
    step: next.step,
    completedMessages: next.completedMessages,
    usage: next.usage,
    billedTokens: next.billedTokens,
    costUsd: next.costUsd,
    contextTokens: next.contextTokens,
    toolErrors: next.toolErrors,
    elapsedMs: next.elapsedMs,
    updatedAt: next.updatedAt,
    outcome: next.outcome,
    pending: next.pending ?? null,
    drift: next.drift,
    trace: next.trace ?? { segment: 0, nextSeq: 0 },
    messages: appendedSince(previous.messages, next.messages),
    repeatCounts,
    taint: next.taint
      ? {
          untrustedResults: next.taint.untrustedResults,
          trustedValues: appendedSince(previous.taint?.trustedValues, next.taint.trustedValues),
          ...(next.taint.privateValues
            ? { privateValues: appendedSince(previous.taint?.privateValues, next.taint.privateValues) }
            : {}),
          ...(next.taint.counters ? { counters: next.taint.counters } : {}),
        }
      : null,
    terminalFailures: appendedSince(previous.terminalFailures, next.terminalFailures),
    toolStats,
    handoffs: appendedSince(previous.handoffs, next.handoffs),
  };
}
