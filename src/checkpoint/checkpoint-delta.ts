import type { ContextEdit } from '../context/context-edit.js';
import type { DriftState } from '../controls/drift-monitor.js';
import type { TrustedFact } from '../controls/taint-ledger.js';
import { ReinsError } from '../errors/reins-error.js';
import type { Outcome } from '../loop/outcome.js';
import type { Handoff, PendingBatch, RunState, ToolStats, TraceCursor } from '../loop/run-state.js';
import type { Message } from '../model/content.js';
import type { Usage } from '../model/model.js';
import { scalarsOf, statsSince, traceSince, usageSince, writeScalarsSince } from './delta-fields.js';
import { driftSince } from './drift-slide.js';

/** Items appended to a list since the last revision: the list is cut to `from`, then `items` follow. */
export interface Appended<T> {
  from: number;
  items: T[];
}

/** How a window moved since the last revision: its first `dropped` entries went, then `items` came. */
export interface Slid<T> {
  dropped: number;
  items: T[];
}

/**
 * What changed in a {@link RunState} since the previous revision. Lists that only grow (the
 * transcript, terminal failures, handoffs, trusted values) carry their new tail; maps carry their
 * changed entries; the drift windows carry how they slid; usage, tool stats and the trace cursor
 * carry the counts that changed; other fields are carried whole. Applying every delta in order to
 * the last snapshot gives the latest state, field for field.
 *
 * What did not change is left out: an absent field, list or map is as before, except `outcome`
 * and `pending`, which are null when absent. (Deltas written before that carry every field whole;
 * they load the same.)
 */
export interface CheckpointDelta {
  revision: number;
  status?: RunState['status'];
  step?: number;
  completedMessages?: number;
  /** The counts that changed. */
  usage?: Partial<Usage>;
  billedTokens?: number;
  costUsd?: number;
  contextTokens?: number;
  toolErrors?: number;
  elapsedMs?: number;
  updatedAt?: number;
  outcome?: Outcome | null;
  pending?: PendingBatch | null;
  /** The drift windows whole; absent when unchanged or when `driftSlide` says how they moved. */
  drift?: DriftState | null;
  /** How the drift windows slid (a window left out did not move). */
  driftSlide?: { actions?: Slid<string>; worldStates?: Slid<string> };
  /** The cursor's fields that changed. */
  trace?: Partial<TraceCursor>;
  messages?: Appended<Message>;
  /** Repeat counts that changed (set, not added). */
  repeatCounts?: [string, number][];
  /** The taint ledger's changes; absent or null when it has none. */
  taint?: {
    untrustedResults: number;
    trustedValues?: Appended<string | TrustedFact>;
    privateValues?: Appended<string>;
    /** The run-wide counts, whole (one per capped tool and plan entry), when they changed. */
    counters?: [string, number][];
  } | null;
  terminalFailures?: Appended<string>;
  /** Per tool, the stats that changed (every one for a tool the state does not have yet). */
  toolStats?: Record<string, Partial<ToolStats>>;
  handoffs?: Appended<Handoff>;
  contextEdits?: Appended<ContextEdit>;
}

function appendTo<T>(list: T[], appended: Appended<T> | undefined, field: string): void {
  if (appended === undefined) return;
  if (appended.from > list.length)
    throw new ReinsError(
      'corrupt_state',
      `checkpoint delta appends ${field} at ${appended.from} past ${list.length}`,
    );
  list.length = appended.from;
  for (const item of appended.items) list.push(item);
}

function slideIn(window: string[], slid: Slid<string> | undefined, field: string): void {
  if (slid === undefined) return;
  if (slid.dropped > window.length)
    throw new ReinsError(
      'corrupt_state',
      `checkpoint delta drops ${slid.dropped} of ${field} from ${window.length}`,
    );
  window.splice(0, slid.dropped);
  for (const item of slid.items) window.push(item);
}

/**
 * The latest state from a snapshot and the deltas committed after it, in order. Each delta must
 * follow the revision before it; a gap or a list appended past its end is `corrupt_state`.
 */
export function applyCheckpointDeltas(snapshot: RunState, deltas: Iterable<CheckpointDelta>): RunState {
  // One copy of the snapshot, its lists grown in place: replaying N deltas costs what they hold, not N².
  const state: RunState = {
    ...snapshot,
    messages: [...snapshot.messages],
    terminalFailures: [...(snapshot.terminalFailures ?? [])],
    handoffs: [...(snapshot.handoffs ?? [])],
    ...(snapshot.contextEdits ? { contextEdits: [...snapshot.contextEdits] } : {}),
    taint: snapshot.taint ? copiedTaint(snapshot.taint) : (snapshot.taint ?? null),
    // Null prototype: a tool named `__proto__` is a key, not a prototype.
    toolStats: Object.assign(Object.create(null) as Record<string, ToolStats>, snapshot.toolStats ?? {}),
  };
  const messages = state.messages;
  const terminalFailures = state.terminalFailures as string[];
  const handoffs = state.handoffs as Handoff[];
  const toolStats = state.toolStats as Record<string, ToolStats>;
  let drift = state.drift
    ? { actions: [...state.drift.actions], worldStates: [...state.drift.worldStates] }
    : null;
  let repeatCounts: Map<string, number> | undefined;
  for (const delta of deltas) {
    const expected = (state.revision ?? 0) + 1;
    if (delta.revision !== expected)
      throw new ReinsError(
        'corrupt_state',
        `checkpoint delta revision ${String(delta.revision)} does not follow revision ${expected - 1}`,
      );
    if (delta.repeatCounts !== undefined && delta.repeatCounts.length > 0) {
      repeatCounts ??= new Map(state.repeatCounts);
      for (const [key, count] of delta.repeatCounts) repeatCounts.set(key, count);
    }
    if (delta.toolStats !== undefined)
      for (const [tool, stats] of Object.entries(delta.toolStats))
        toolStats[tool] = {
          ...(Object.hasOwn(toolStats, tool) ? toolStats[tool] : undefined),
          ...stats,
        } as ToolStats;
    state.revision = delta.revision;
    if (delta.status !== undefined) state.status = delta.status;
    if (delta.step !== undefined) state.step = delta.step;
    if (delta.completedMessages !== undefined) state.completedMessages = delta.completedMessages;
    if (delta.usage !== undefined) state.usage = { ...state.usage, ...delta.usage };
    if (delta.billedTokens !== undefined) state.billedTokens = delta.billedTokens;
    if (delta.costUsd !== undefined) state.costUsd = delta.costUsd;
    if (delta.contextTokens !== undefined) state.contextTokens = delta.contextTokens;
    if (delta.toolErrors !== undefined) state.toolErrors = delta.toolErrors;
    if (delta.elapsedMs !== undefined) state.elapsedMs = delta.elapsedMs;
    if (delta.updatedAt !== undefined) state.updatedAt = delta.updatedAt;
    state.outcome = delta.outcome ?? null;
    state.pending = delta.pending ?? null;
    if (delta.drift !== undefined)
      drift = delta.drift && { actions: [...delta.drift.actions], worldStates: [...delta.drift.worldStates] };
    else if (delta.driftSlide !== undefined) {
      if (drift === null)
        throw new ReinsError(
          'corrupt_state',
          'checkpoint delta slides drift windows the state does not have',
        );
      slideIn(drift.actions, delta.driftSlide.actions, 'drift.actions');
      slideIn(drift.worldStates, delta.driftSlide.worldStates, 'drift.worldStates');
    }
    if (delta.trace !== undefined)
      state.trace = { ...(state.trace ?? { segment: 0, nextSeq: 0 }), ...delta.trace };
    appendTo(messages, delta.messages, 'messages');
    if (delta.taint) state.taint = appliedTaint(state.taint, delta.taint);
    appendTo(terminalFailures, delta.terminalFailures, 'terminalFailures');
    appendTo(handoffs, delta.handoffs, 'handoffs');
    if (delta.contextEdits !== undefined) {
      state.contextEdits ??= [];
      appendTo(state.contextEdits, delta.contextEdits, 'contextEdits');
    }
  }
  state.drift = drift;
  if (repeatCounts) state.repeatCounts = [...repeatCounts];
  return state;
}

function copiedTaint(taint: NonNullable<RunState['taint']>): NonNullable<RunState['taint']> {
  return {
    ...taint,
    trustedValues: [...taint.trustedValues],
    ...(taint.privateValues ? { privateValues: [...taint.privateValues] } : {}),
  };
}

/** The ledger after a delta's changes; `taint` is the applier's own copy, changed in place. */
function appliedTaint(
  taint: RunState['taint'],
  delta: NonNullable<CheckpointDelta['taint']>,
): NonNullable<RunState['taint']> {
  const next: NonNullable<RunState['taint']> = taint ?? { untrustedResults: 0, trustedValues: [] };
  next.untrustedResults = delta.untrustedResults;
  appendTo(next.trustedValues, delta.trustedValues, 'taint.trustedValues');
  if (delta.privateValues) {
    next.privateValues ??= [];
    appendTo(next.privateValues, delta.privateValues, 'taint.privateValues');
  }
  if (delta.counters !== undefined) next.counters = delta.counters;
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

/**
 * The new tail of a list: cut at the first item that differs, then what `next` has from there;
 * undefined when `next` is `previous` with nothing changed.
 */
function appendedSince<T>(
  previous: readonly T[] | undefined,
  next: readonly T[] | undefined,
): Appended<T> | undefined {
  const before = previous ?? [];
  const after = next ?? [];
  let from = 0;
  const common = Math.min(before.length, after.length);
  while (from < common && jsonEqual(before[from], after[from])) from++;
  if (from === before.length && from === after.length) return undefined;
  return { from, items: after.slice(from) };
}

/**
 * The delta that takes `previous` to `next`, for `revision = (previous.revision ?? 0) + 1`, in one
 * pass over both (for tests and tools; the loop builds its deltas as it goes). Lists carry their
 * tail after the longest common prefix (so a truncated list is cut, then refilled); repeat counts
 * and tool stats carry the entries whose value differs; what did not change is left out. What a
 * delta cannot say is not said: a repeat count or tool stat that disappears, taint that goes back
 * to none, or a change of `runId`, `system` or `startedAt` (write a snapshot for those). A state
 * without `trace` gets `{ segment: 0, nextSeq: 0 }`.
 */
export function diffRunStates(previous: RunState, next: RunState): CheckpointDelta {
  const before = new Map(previous.repeatCounts);
  const repeatCounts: [string, number][] = [];
  for (const [key, count] of next.repeatCounts)
    if (before.get(key) !== count) repeatCounts.push([key, count]);
  const toolStats = Object.create(null) as Record<string, Partial<ToolStats>>;
  let statsChanged = false;
  const previousStats = previous.toolStats ?? {};
  for (const [tool, stats] of Object.entries(next.toolStats ?? {})) {
    const changed = statsSince(Object.hasOwn(previousStats, tool) ? previousStats[tool] : undefined, stats);
    if (changed) {
      toolStats[tool] = changed;
      statsChanged = true;
    }
  }
  const delta: CheckpointDelta = { revision: (previous.revision ?? 0) + 1 };
  writeScalarsSince(delta, scalarsOf(previous), scalarsOf(next));
  const usage = usageSince(previous.usage, next.usage);
  if (usage) delta.usage = usage;
  const trace = traceSince(
    previous.trace ?? { segment: 0, nextSeq: 0 },
    next.trace ?? { segment: 0, nextSeq: 0 },
  );
  if (trace) delta.trace = trace;
  Object.assign(delta, driftSince(previous.drift, next.drift));
  if (next.outcome !== null) delta.outcome = next.outcome;
  if ((next.pending ?? null) !== null) delta.pending = next.pending ?? null;
  const messages = appendedSince(previous.messages, next.messages);
  if (messages) delta.messages = messages;
  if (repeatCounts.length > 0) delta.repeatCounts = repeatCounts;
  if (next.taint) {
    const trustedValues = appendedSince(previous.taint?.trustedValues, next.taint.trustedValues);
    const privateValues = appendedSince(previous.taint?.privateValues, next.taint.privateValues);
    const counters =
      next.taint.counters && !jsonEqual(previous.taint?.counters, next.taint.counters)
        ? next.taint.counters
        : undefined;
    if (
      trustedValues ||
      privateValues ||
      counters ||
      !previous.taint ||
      previous.taint.untrustedResults !== next.taint.untrustedResults
    )
      delta.taint = {
        untrustedResults: next.taint.untrustedResults,
        ...(trustedValues ? { trustedValues } : {}),
        ...(privateValues ? { privateValues } : {}),
        ...(counters ? { counters } : {}),
      };
  }
  const terminalFailures = appendedSince(previous.terminalFailures, next.terminalFailures);
  if (terminalFailures) delta.terminalFailures = terminalFailures;
  if (statsChanged) delta.toolStats = toolStats;
  const handoffs = appendedSince(previous.handoffs, next.handoffs);
  if (handoffs) delta.handoffs = handoffs;
  const contextEdits = appendedSince(previous.contextEdits, next.contextEdits);
  if (contextEdits) delta.contextEdits = contextEdits;
  return delta;
}
