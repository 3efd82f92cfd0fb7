import { errorInfo } from '../errors/error-info.js';
import type { ToolUseBlock } from '../model/content.js';
import { traceVersion } from '../trace/events.js';
import type { ApprovalVerdict } from './approval.js';
import type { LoopSetup } from './loop-setup.js';
import { createLoopState, type LoopState } from './loop-state.js';
import { isLoopStop } from './loop-stop.js';
import type { Outcome } from './outcome.js';
import type { RunResult } from './run-result.js';
import { callModel } from './stages/call-model.js';
import { checkBudgets } from './stages/check-budgets.js';
import { checkProposals } from './stages/check-proposals.js';
import { ensureClaimed } from './stages/commit-checkpoint.js';
import { abortOutcome, finish, release, result } from './stages/finish.js';
import { endStep, observe } from './stages/observe.js';
import { planBatch } from './stages/plan-batch.js';
import { prepareCall } from './stages/prepare-call.js';
import { proposedCall } from './stages/proposed-call.js';
import { readResponse } from './stages/read-response.js';
import { runBatch } from './stages/run-batch.js';

export type { RunResult } from './run-result.js';

/**
 * The loop: think, act, observe, with every control checked by code, not by the model. Each stage
 * is a small function over one {@link LoopState}; a stage ends the run by returning an outcome or,
 * from deep inside (a sink, a store), by throwing a {@link LoopStop}. Never rejects.
 */
export async function runLoop(setup: LoopSetup): Promise<RunResult> {
  const state = createLoopState(setup);
  try {
    if (setup.state.status === 'ended' && setup.state.outcome) {
      // An ended run returns its outcome at once: nothing runs, nothing is claimed or written.
      release(state);
      return result(state, setup.state.outcome);
    }
    // The wall clock first: it bounds everything after it, a sink asked where the trace ended included.
    startWallClock(state);
    await state.trace.open(state.run.signal);
    if (!setup.exactlyOnce) state.claimed = true;
    return await finish(state, await steps(state));
  } catch (thrown) {
    return await finish(state, stoppedBy(state, thrown));
  }
}

/** The steps, until one of them ends the run. */
async function steps(state: LoopState): Promise<Outcome> {
  const { setup } = state;
  try {
    const started = state.trace.emit(runStart(state));
    if (started) await started;
    const pending = setup.state.pending;
    if (pending) {
      state.lastStep = pending.step;
      // Verdicts given at earlier pauses of this batch still hold; a newer one for the same call wins.
      const verdicts = [...(pending.verdicts ?? []), ...(setup.approvals ?? [])];
      const ended = await act(
        state,
        pending.step,
        pending.calls.map(proposedCall),
        pending.thought,
        verdicts,
        undefined,
      );
      if (ended) return ended;
    }
    return await everyStep(state);
  } catch (thrown) {
    return stoppedBy(state, thrown);
  }
}

/**
 * The steps until one ends the run; each pass of the loop is one step: prepare → check budgets →
 * call the model → read it → check the proposals → act. Stages whose callbacks and sinks are
 * synchronous return plain values; only those that did not are awaited. One async frame for every
 * step of the run: an async function per step cost its frame, its promise and one more await
 * (~400 B a step).
 */
async function everyStep(state: LoopState): Promise<Outcome> {
  const { limits } = state.setup;
  while (true) {
    const step = state.completedSteps + 1;
    const final = step >= limits.maxSteps && limits.onStepLimit === 'final-answer';
    const preparing = prepareCall(state, step, final);
    const prepared = preparing instanceof Promise ? await preparing : preparing;
    const checking = checkBudgets(state, 'before-call', step, prepared.contextTokens, prepared.model);
    const over = checking instanceof Promise ? await checking : checking;
    if (over) return over;
    if (state.run.signal.aborted) return abortOutcome(state, 'before-call');
    if (state.trace.on) {
      const written = state.trace.emit({
        type: 'step-start',
        step,
        contextTokens: prepared.contextTokens,
        billedTokens: state.billedTokens,
        costUsd: state.costUsd,
        toolsEnabled: !final,
        v: traceVersion,
        runId: '',
        seq: 0,
        at: 0,
      });
      if (written) await written;
    }
    state.lastStep = step;
    if (!state.claimed) await ensureClaimed(state);
    const turn = await callModel(state, step, prepared);
    const reading = readResponse(state, step, final, turn);
    if ('ends' in reading) return reading.ends;
    if ('continues' in reading) {
      state.completedMessages = state.messages.length;
      const ended = endStep(state, step);
      if (ended) await ended;
      continue;
    }
    const proposed = turn.calls.map(proposedCall);
    const checked = checkProposals(state, step, proposed);
    const looped = checked instanceof Promise ? await checked : checked;
    if (looped) return looped;
    // act(), inline: one async frame fewer per step.
    const planning = planBatch(state, step, proposed, turn.text, undefined, prepared.offered);
    const planned = planning instanceof Promise ? await planning : planning;
    if ('ends' in planned) return planned.ends;
    // The proposals' calls, in order: the turn's own list.
    const calls = turn.calls;
    if (!state.claimed) await ensureClaimed(state);
    const running = runBatch(state, step, calls, planned.plans);
    const settlements = running instanceof Promise ? await running : running;
    const observing = observe(state, step, calls, settlements, turn.text);
    const observed = observing instanceof Promise ? await observing : observing;
    if (observed) return observed;
  }
}

/** Plan the batch, run it, observe the results. */
async function act(
  state: LoopState,
  step: number,
  proposed: ReturnType<typeof proposedCall>[],
  thought: string,
  verdicts: readonly ApprovalVerdict[] | undefined,
  offered: ReadonlySet<string> | undefined,
): Promise<Outcome | undefined> {
  const planning = planBatch(state, step, proposed, thought, verdicts, offered);
  const planned = planning instanceof Promise ? await planning : planning;
  if ('ends' in planned) return planned.ends;
  const calls: ToolUseBlock[] = proposed.map((entry) => entry.call);
  if (!state.claimed) await ensureClaimed(state);
  const running = runBatch(state, step, calls, planned.plans);
  const settlements = running instanceof Promise ? await running : running;
  return observe(state, step, calls, settlements, thought);
}

function runStart(state: LoopState) {
  const { setup } = state;
  return {
    type: 'run-start' as const,
    model: setup.model.name,
    system: setup.state.system,
    messages: setup.resumed ? [] : [...state.messages],
    tools: setup.toolDefinitions,
    actorId: setup.actorId,
    limits: setup.limits,
    prices: (setup.prices as Record<string, unknown> | undefined) ?? null,
    resumedFrom: setup.resumed ? setup.state : null,
    segment: state.trace.segment,
    ...(setup.modelSettings === undefined ? {} : { modelSettings: setup.modelSettings }),
  };
}

/** The wall clock bounds everything: its timer aborts the run's signal, which every stage races. */
function startWallClock(state: LoopState): void {
  const { maxWallMs } = state.setup.limits;
  if (maxWallMs === null) return;
  const left = Math.max(0, maxWallMs - state.setup.state.elapsedMs);
  state.wallTimer = state.setup.clock.setTimeout(() => state.run.abort({ type: 'wall_clock' }), left);
}

/** The outcome a thrown value stands for: a stage's {@link LoopStop}, or a bug reported, never rethrown. */
function stoppedBy(state: LoopState, thrown: unknown): Outcome {
  if (isLoopStop(thrown)) return thrown.outcome ?? abortOutcome(state, thrown.phase);
  return { kind: 'hard_error', source: 'internal', error: errorInfo(thrown) };
}
