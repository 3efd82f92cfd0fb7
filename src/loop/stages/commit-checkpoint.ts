import type { CheckpointDelta } from '../../checkpoint/checkpoint-delta.js';
import { type CheckpointCommit, isRevisionedStore } from '../../checkpoint/checkpoint-store.js';
import { errorInfo } from '../../errors/error-info.js';
import type { Message } from '../../model/content.js';
import { guard } from '../boundary.js';
import { type LoopState, toRunState } from '../loop-state.js';
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

/** Fixed fields of a delta, weighed like this many tokens when deciding when to snapshot. */
const deltaOverheadTokens = 64;
/** Runs shorter than this many tokens of transcript write one snapshot and deltas after it. */
const snapshotFloorTokens = 2_000;

function messageTokens(state: LoopState, messages: readonly Message[], from: number): number {
  let tokens = 0;
  for (let i = from; i < messages.length; i++) tokens += state.setup.counter.message(messages[i] as Message);
  return tokens;
}

/**
 * Claim the run before this segment's first model call or tool execution: the next revision,
 * compare-and-set against the store (or this process's memory without one). A resume that only
 * re-pauses runs nothing and claims nothing, so the same paused state can be looked at again; a
 * second resume that would run something ends `stale_state`. Held trace events are written once
 * the claim holds.
 */
export async function ensureClaimed(state: LoopState): Promise<void> {
  if (state.claimed) return;
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
export async function commitStep(state: LoopState): Promise<void> {
  const refused = await commit(state, 'running', null, false);
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

async function commit(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  claim: boolean,
): Promise<{ currentRevision: number } | undefined> {
  const { setup } = state;
  const store = setup.checkpoint;
  const revision = state.revision + 1;
  if (!store || !isRevisionedStore(store)) {
    if (store) {
      const full = toRunState(state, status, outcome);
      full.revision = revision;
      const saved = await guard('checkpoint', () => store.save(full), state.run.signal);
      if (!saved.ok) throw LoopStop.from(saved, 'after-results');
    }
    state.revision = revision;
    if (setup.exactlyOnce) remember(setup.runId, revision, status === 'running');
    return undefined;
  }
  const body = writeOf(state, status, outcome, revision, claim);
  const result = await guard('checkpoint', () => store.commit(body), state.run.signal);
  if (!result.ok) throw LoopStop.from(result, 'after-results');
  let ok: unknown;
  let current: unknown;
  try {
    const answer = result.value as { ok?: unknown; currentRevision?: unknown } | undefined;
    ok = answer?.ok;
    current = answer?.currentRevision;
  } catch (thrown) {
    throw new LoopStop(
      { kind: 'hard_error', source: 'checkpoint', error: errorInfo(thrown) },
      'after-results',
    );
  }
  if (ok !== true) {
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
  state.revision = revision;
  return undefined;
}

/** A snapshot when this segment has none yet or the deltas outweigh the last one; a delta otherwise. */
function writeOf(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
  claim: boolean,
): CheckpointCommit {
  const { setup } = state;
  const head = {
    runId: setup.runId,
    expectedRevision: state.revision,
    revision,
    status,
    step: state.completedSteps,
    updatedAt: setup.clock.now(),
  };
  const committed = state.committed;
  const added = committed
    ? messageTokens(state, state.messages, Math.min(committed.messages, state.messages.length))
    : 0;
  if (
    claim ||
    !committed ||
    state.messages.length < committed.messages ||
    committed.deltaBytes + added + deltaOverheadTokens >
      Math.max(committed.snapshotBytes, snapshotFloorTokens)
  ) {
    const snapshot = toRunState(state, status, outcome);
    snapshot.revision = revision;
    state.repeats?.takeChanges();
    state.changedStats.clear();
    state.committed = {
      messages: state.messages.length,
      terminalFailures: state.terminalList.length,
      handoffs: state.handoffs.length,
      trustedValues: state.taint.trustedValueCount,
      privateValues: state.taint.privateValueCount,
      deltaBytes: 0,
      snapshotBytes: messageTokens(state, state.messages, 0),
    };
    // The snapshot's lists are the live ones: a store must serialize before it resolves.
    return { ...head, snapshot };
  }
  const delta = deltaOf(state, status, outcome, revision);
  committed.messages = state.messages.length;
  committed.terminalFailures = state.terminalList.length;
  committed.handoffs = state.handoffs.length;
  committed.trustedValues = state.taint.trustedValueCount;
  committed.privateValues = state.taint.privateValueCount;
  committed.deltaBytes += added + deltaOverheadTokens;
  return { ...head, delta };
}

function deltaOf(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
): CheckpointDelta {
  const committed = state.committed as NonNullable<LoopState['committed']>;
  const now = state.setup.clock.now();
  const toolStats: Record<string, ToolStats> = {};
  for (const tool of state.changedStats) toolStats[tool] = state.toolStats[tool] as ToolStats;
  state.changedStats.clear();
  return {
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
    outcome,
    pending: state.pending,
    drift: state.drift ? state.drift.state() : null,
    trace: state.trace.cursor(),
    messages: { from: committed.messages, items: state.messages.slice(committed.messages) },
    repeatCounts: state.repeats ? state.repeats.takeChanges() : [],
    taint: {
      untrustedResults: state.taint.untrustedResults,
      trustedValues: {
        from: committed.trustedValues,
        items: state.taint.trustedValuesFrom(committed.trustedValues),
      },
      ...(state.taint.privateValueCount > 0
        ? {
            privateValues: {
              from: committed.privateValues,
              items: state.taint.privateValuesFrom(committed.privateValues),
            },
          }
        : {}),
      ...(state.taint.counters().length > 0 ? { counters: state.taint.counters() } : {}),
    },
    terminalFailures: {
      from: committed.terminalFailures,
      items: state.terminalList.slice(committed.terminalFailures),
    },
    toolStats,
    handoffs: { from: committed.handoffs, items: state.handoffs.slice(committed.handoffs) },
  };
}
