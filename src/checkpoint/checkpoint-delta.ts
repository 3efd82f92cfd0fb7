import type { DriftState } from '../controls/drift-monitor.js';
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
  taint: { untrustedResults: number; trustedValues: Appended<string> } | null;
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
      ? { ...snapshot.taint, trustedValues: [...snapshot.taint.trustedValues] }
      : (snapshot.taint ?? null),
    toolStats: { ...(snapshot.toolStats ?? {}) },
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
      taint:
        delta.taint === null
          ? (state.taint ?? null)
          : {
              untrustedResults: delta.taint.untrustedResults,
              trustedValues: appendTo(
                state.taint?.trustedValues,
                delta.taint.trustedValues,
                'taint.trustedValues',
              ),
            },
      terminalFailures: appendTo(state.terminalFailures, delta.terminalFailures, 'terminalFailures'),
      toolStats,
      handoffs: appendTo(state.handoffs, delta.handoffs, 'handoffs'),
    };
  }
  if (repeatCounts) state.repeatCounts = [...repeatCounts];
  return state;
}
