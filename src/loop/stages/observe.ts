import type { DriftVerdict } from '../../controls/drift-monitor.js';
import type { ToolResultBlock, ToolUseBlock, UserMessage } from '../../model/content.js';
import { traceVersion } from '../../trace/events.js';
import { guard } from '../boundary.js';
import type { CallSettlement } from '../call-plan.js';
import { callKey } from '../dispatch.js';
import { type LoopState, statsOf } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';
import { checkBudgets } from './check-budgets.js';
import { commitStep } from './commit-checkpoint.js';

const deniedStatuses: ReadonlySet<string> = new Set([
  'denied',
  'denied_by_human',
  'writes_disabled',
  'blocked_tainted',
]);

/** Per-tool counts, terminal failures, taint and handoffs from one batch's settlements. */
function record(
  state: LoopState,
  step: number,
  calls: readonly ToolUseBlock[],
  settlements: CallSettlement[],
  thought: string,
): void {
  for (let index = 0; index < settlements.length; index++) {
    const settlement = settlements[index] as CallSettlement;
    const call = calls[index] as ToolUseBlock;
    const stats = statsOf(state, call.name);
    stats.calls++;
    if (settlement.status === 'ok') stats.ok++;
    if (settlement.isError) stats.errors++;
    if (settlement.status === 'validation_error') stats.validationFailures++;
    if (settlement.truncation) stats.truncated++;
    if (deniedStatuses.has(settlement.status)) stats.denied++;
    const executed = stats.ok + stats.validationFailures;
    stats.validationFailureRate = executed === 0 ? 0 : stats.validationFailures / executed;
    if (settlement.terminal) {
      const key = callKey(call);
      if (!state.terminal.has(key)) {
        state.terminal.add(key);
        state.terminalList.push(key);
      }
    }
    // Echoes of the call's own input were dropped when the result was made (execute-call.ts).
    state.taint.noteResult(
      settlement.untrusted === true,
      settlement.trustedLeaves ?? settlement.trustedValues ?? [],
      call.name,
    );
    if (settlement.privateValues) state.taint.notePrivate(settlement.privateValues);
    if (settlement.status === 'drafted' || settlement.status === 'proposed') {
      state.handoffs.push({
        kind: settlement.status === 'drafted' ? 'draft' : 'proposal',
        callId: call.id,
        tool: call.name,
        input: settlement.recorded,
        step,
        reason: thought,
      });
    }
  }
}

/**
 * Observe: append the results, then the after-step controls — world state and drift, the step's
 * checkpoint, the tool-error budget, and the budgets against the next call, checked right after
 * the results land so the run stops before the next expensive call.
 */
export function observe(
  state: LoopState,
  step: number,
  calls: readonly ToolUseBlock[],
  settlements: CallSettlement[],
  thought: string,
): Outcome | undefined | Promise<Outcome | undefined> {
  const { setup, trace } = state;
  record(state, step, calls, settlements, thought);
  // Sized once, not grown by push: the transcript keeps this array for the rest of the run, and a
  // pushed-to array keeps a backing store of 17 slots. One call, the common batch, needs no closure.
  const content =
    calls.length === 1
      ? [resultBlock(calls[0] as ToolUseBlock, settlements[0] as CallSettlement)]
      : calls.map((call, index) => resultBlock(call, settlements[index] as CallSettlement));
  const results: UserMessage = { role: 'user', content };
  state.messages.push(results);
  // Remembered only where it is measured again (a context window, or prepareStep's requests, which
  // count whole transcripts); otherwise nothing asks again, and a remembered message is a weak-map
  // entry held, and visited by every GC, for the rest of the run.
  state.contextTokens +=
    state.window || setup.prepareStep ? setup.counter.message(results) : setup.counter.fresh(results);
  for (let index = 0; index < settlements.length; index++)
    if ((settlements[index] as CallSettlement).isError) state.toolErrors++;
  state.completedSteps = step;
  state.completedMessages = state.messages.length;

  const drift = state.drift;
  if (!drift) return closeStep(state, step, undefined);
  if (setup.worldState) return observeWorld(state, step, drift);
  const verdict = drift.check();
  const written = trace.on
    ? trace.emit({
        type: 'progress-check',
        step,
        worldState: null,
        drifting: verdict ?? null,
        v: traceVersion,
        runId: '',
        seq: 0,
        at: 0,
      })
    : undefined;
  return written ? written.then(() => closeStep(state, step, verdict)) : closeStep(state, step, verdict);
}

/** The result block the model is shown for one call. */
function resultBlock(call: ToolUseBlock, settlement: CallSettlement): ToolResultBlock {
  const block: ToolResultBlock = {
    type: 'tool_result',
    toolUseId: call.id,
    content: settlement.content,
    isError: settlement.isError,
  };
  if (settlement.attachments) block.attachments = settlement.attachments;
  return block;
}

/** Drift with the world state read from the user's callback (inside the boundary). */
async function observeWorld(
  state: LoopState,
  step: number,
  drift: NonNullable<LoopState['drift']>,
): Promise<Outcome | undefined> {
  const reader = state.setup.worldState as NonNullable<LoopState['setup']['worldState']>;
  const read = await guard('world_state', () => reader({ step, messages: state.messages }), state.run.signal);
  if (!read.ok) throw LoopStop.from(read, 'after-results');
  if (typeof read.value !== 'string')
    throw new LoopStop(
      {
        kind: 'hard_error',
        source: 'world_state',
        error: {
          name: 'InvalidWorldState',
          message: `worldState() must return a string, got ${typeof read.value}`,
        },
      },
      'after-results',
    );
  const worldState = read.value;
  drift.recordWorldState(worldState);
  const verdict: DriftVerdict | undefined = drift.check();
  if (state.trace.on) {
    const written = state.trace.emit({ type: 'progress-check', step, worldState, drifting: verdict ?? null });
    if (written) await written;
  }
  return closeStep(state, step, verdict);
}

/** The step's end (event and checkpoint), then the after-step controls. */
function closeStep(
  state: LoopState,
  step: number,
  verdict: DriftVerdict | undefined,
): Outcome | undefined | Promise<Outcome | undefined> {
  const ended = endStep(state, step);
  return ended ? ended.then(() => afterStep(state, step, verdict)) : afterStep(state, step, verdict);
}

/** Drift's verdict, the tool-error budget, then the budgets against the next call. */
function afterStep(
  state: LoopState,
  step: number,
  verdict: DriftVerdict | undefined,
): Outcome | undefined | Promise<Outcome | undefined> {
  if (verdict)
    return { kind: 'looped', reason: 'no_progress', signal: verdict.signal, detail: verdict.detail };
  const { maxToolErrors } = state.setup.limits;
  if (maxToolErrors !== null && state.toolErrors > maxToolErrors)
    return {
      kind: 'over_budget',
      budget: 'tool_errors',
      limit: maxToolErrors,
      actual: state.toolErrors,
      phase: 'after-results',
    };
  return checkBudgets(state, 'after-results', step, state.contextTokens);
}

/** The `step-end` event and the step's checkpoint; undefined when both were synchronous. */
export function endStep(state: LoopState, step: number): Promise<void> | undefined {
  const written = state.trace.on
    ? state.trace.emit({
        type: 'step-end',
        step,
        contextTokens: state.contextTokens,
        billedTokens: state.billedTokens,
        costUsd: state.costUsd,
        toolErrors: state.toolErrors,
        v: traceVersion,
        runId: '',
        seq: 0,
        at: 0,
      })
    : undefined;
  if (written) return written.then(() => commitStep(state));
  const committed = commitStep(state);
  return committed instanceof Promise ? committed : undefined;
}
