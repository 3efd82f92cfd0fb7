import { abortCauseOf } from '../abort.js';
import { guard } from '../boundary.js';
import type { LoopState } from '../loop-state.js';
import type { BudgetPhase, Outcome } from '../outcome.js';
import type { RunResult } from '../run-result.js';
import { commitEnd, ensureClaimed } from './commit-checkpoint.js';

/** What the run's signal says ended it: the wall clock (`over_budget`) or a cancellation. */
export function abortOutcome(state: LoopState, phase: BudgetPhase): Outcome {
  const cause = abortCauseOf(state.run.signal);
  const { limits, clock } = state.setup;
  if (cause.type === 'wall_clock' && limits.maxWallMs !== null)
    return {
      kind: 'over_budget',
      budget: 'wall_ms',
      limit: limits.maxWallMs,
      actual: clock.now() - state.startedAt,
      phase,
    };
  return { kind: 'cancelled', reason: cause.type === 'cancelled' ? cause.reason : cause.type };
}

/** Stops the run's timers and listeners: nothing of the run outlives it. */
export function release(state: LoopState): void {
  if (state.wallTimer !== undefined) state.setup.clock.clearTimeout(state.wallTimer as never);
  state.wallTimer = undefined;
  state.deadlines.dispose();
  state.unlink();
}

/** The `run-end` event, the final checkpoint and the result. Nothing here can change the outcome. */
export async function finish(state: LoopState, outcome: Outcome): Promise<RunResult> {
  if (outcome.kind === 'stale_state') {
    // Refused: nothing ran, nothing of this attempt is written, the state comes back as it was.
    release(state);
    state.trace.drop();
    return result(state, outcome);
  }
  // The wall clock keeps running through the last writes: a sink or store that hangs now is
  // abandoned when it fires, like any other callback. Released once they are done.
  try {
    return await finishWrites(state, outcome);
  } finally {
    release(state);
    endPolicy(state, outcome);
  }
}

/**
 * Tells the context policy the run ended, so it can let go of what it kept for it (a resumed run
 * reads its transcript again). Inside the boundary: a policy that throws here changes nothing.
 */
function endPolicy(state: LoopState, outcome: Outcome): void {
  const end = state.setup.context?.end;
  if (!end) return;
  const ended = guard(
    'context_policy',
    () => end.call(state.setup.context, state.setup.runId, outcome),
    neverAborted,
  );
  if (ended instanceof Promise) ended.then(undefined, () => {});
}

const neverAborted = new AbortController().signal;

async function finishWrites(state: LoopState, outcome: Outcome): Promise<RunResult> {
  await settleClaim(state);
  const body = {
    type: 'run-end' as const,
    outcome,
    steps: state.lastStep,
    contextTokens: state.contextTokens,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
    usage: state.usage,
  };
  await state.trace.close(body);
  const final = await commitEnd(state, outcome);
  return result(state, outcome, final);
}

/**
 * A fresh run that ended before its first call is claimed now (nothing can contest it); a resume
 * that ran nothing writes its trace and no checkpoint.
 */
async function settleClaim(state: LoopState): Promise<void> {
  if (state.claimed || !state.setup.exactlyOnce) return;
  if (!state.setup.resumed) {
    try {
      await ensureClaimed(state);
      return;
    } catch {
      // A store failing on the claim of a run that did nothing: write the trace all the same.
    }
  }
  try {
    await state.trace.release();
  } catch {
    // The sink failed on the held events; the outcome stands.
  }
}

/** The result of a run that never started: the state handed in comes back unchanged. */
export function result(state: LoopState, outcome: Outcome, final = state.setup.state): RunResult {
  return {
    runId: state.setup.runId,
    outcome,
    steps: state.lastStep,
    contextTokens: state.contextTokens,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
    usage: state.usage,
    toolErrors: state.toolErrors,
    messages: state.messages,
    state: final,
    toolStats: state.toolStats,
    handoffs: state.handoffs,
  };
}
