import type { ToolResultBlock, ToolUseBlock } from '../../model/content.js';
import { type TraceEvent, traceVersion } from '../../trace/events.js';
import type { CallPlan, CallSettlement } from '../call-plan.js';
import type { LoopState } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import { mapConcurrent } from '../map-concurrent.js';
import { BatchRuntime } from './batch-runtime.js';

/**
 * Run the batch, up to `toolConcurrency` calls at once, sharing one {@link BatchRuntime}: a fatal
 * error aborts its siblings, the run's signal aborts them all. Each result is a `tool-result` event
 * with exactly what the model is shown. Ends the run on cancellation, the wall clock, a fatal tool
 * error or a failing output check.
 */
export function runBatch(
  state: LoopState,
  step: number,
  calls: readonly ToolUseBlock[],
  plans: readonly CallPlan[],
): CallSettlement[] | Promise<CallSettlement[]> {
  const { setup } = state;
  const runtime = new BatchRuntime(setup.clock, state.run.signal, state.deadlines);
  state.batch = runtime;
  const batch: Batch = { state, step, calls, plans, runtime, fatal: undefined };
  const only = plans.length === 1 ? (plans[0] as CallPlan) : undefined;
  if (only?.kind === 'execute') return runOnly(state, batch, only);
  let running: CallSettlement | CallSettlement[] | Promise<CallSettlement | CallSettlement[]>;
  try {
    // One call, the common batch: no worker closures, and no promise when the tool is synchronous.
    running =
      plans.length === 1
        ? settleCall(batch, 0)
        : mapConcurrent(plans, setup.limits.toolConcurrency, async (_plan, index) =>
            settleCall(batch, index),
          );
  } catch (thrown) {
    endBatch(state, runtime);
    throw thrown;
  }
  if (!(running instanceof Promise)) return finishBatch(state, batch, running);
  return running.then(
    (settled) => finishBatch(state, batch, settled),
    (thrown: unknown) => {
      endBatch(state, runtime);
      throw thrown;
    },
  );
}

/**
 * A batch of one executed call, the common one: the call's settlement, its event and the batch's
 * end in one continuation (settleCall's then() and the batch's would make two promises and two
 * closures a step).
 */
function runOnly(
  state: LoopState,
  batch: Batch,
  plan: Extract<CallPlan, { kind: 'execute' }>,
): Promise<CallSettlement[]> {
  const startedAt = state.setup.clock.now();
  let execution: Promise<CallSettlement>;
  try {
    execution = plan.execute(batch.runtime);
  } catch (thrown) {
    endBatch(state, batch.runtime);
    throw thrown;
  }
  const failed = (thrown: unknown): never => {
    endBatch(state, batch.runtime);
    throw thrown;
  };
  return execution.then((settlement) => {
    let recorded: CallSettlement | Promise<CallSettlement>;
    try {
      recorded = settled(batch, 0, settlement, startedAt);
    } catch (thrown) {
      return failed(thrown);
    }
    if (recorded instanceof Promise) return recorded.then((last) => finishBatch(state, batch, last), failed);
    return finishBatch(state, batch, recorded);
  }, failed);
}

function endBatch(state: LoopState, runtime: BatchRuntime): void {
  state.batch = undefined;
  runtime.dispose();
}

/** The batch is over: the run ends on cancellation, the wall clock or a fatal call. */
function finishBatch(
  state: LoopState,
  batch: Batch,
  settled: CallSettlement | CallSettlement[],
): CallSettlement[] {
  endBatch(state, batch.runtime);
  const settlements = Array.isArray(settled) ? settled : [settled];
  if (state.run.signal.aborted) throw new LoopStop(undefined, 'during-call');
  const failed = batch.fatal;
  if (failed?.failure) throw new LoopStop({ kind: 'hard_error', ...failed.failure }, 'during-call');
  if (failed)
    throw new LoopStop(
      {
        kind: 'hard_error',
        source: 'tool',
        error: failed.error ?? { name: 'ToolError', message: failed.content },
      },
      'during-call',
    );
  return settlements;
}

/** One batch being run. */
interface Batch {
  state: LoopState;
  step: number;
  calls: readonly ToolUseBlock[];
  plans: readonly CallPlan[];
  runtime: BatchRuntime;
  /** The first fatal settlement: it aborted its siblings. */
  fatal: CallSettlement | undefined;
}

/** One call of the batch: settled by its plan or executed, then its `tool-result` event. */
function settleCall(batch: Batch, index: number): CallSettlement | Promise<CallSettlement> {
  const plan = batch.plans[index] as CallPlan;
  const startedAt = batch.state.setup.clock.now();
  if (plan.kind === 'settled') return settled(batch, index, plan.settlement, startedAt);
  return (plan as Extract<CallPlan, { kind: 'execute' }>)
    .execute(batch.runtime)
    .then((settlement) => settled(batch, index, settlement, startedAt));
}

/** A call's settlement: a fatal one aborts its siblings; the `tool-result` event records it. */
function settled(
  batch: Batch,
  index: number,
  settlement: CallSettlement,
  startedAt: number,
): CallSettlement | Promise<CallSettlement> {
  const { state, step, runtime } = batch;
  const { clock, counter } = state.setup;
  const trace = state.trace;
  const call = batch.calls[index] as ToolUseBlock;
  if ((settlement.fatal || settlement.failure) && !batch.fatal) {
    batch.fatal = settlement;
    runtime.abort({ type: 'fatal_sibling', callId: call.id });
  }
  if (!trace.on) return settlement;
  const now = clock.now();
  const block: ToolResultBlock = {
    type: 'tool_result',
    toolUseId: call.id,
    content: settlement.content,
    isError: settlement.isError,
  };
  if (settlement.attachments) block.attachments = settlement.attachments;
  const event: Extract<TraceEvent, { type: 'tool-result' }> = {
    type: 'tool-result',
    step,
    callId: call.id,
    tool: call.name,
    status: settlement.status,
    content: settlement.content,
    isError: settlement.isError,
    resultTokens: counter.block(block),
    durationMs: now - startedAt,
    error: settlement.error,
    v: traceVersion,
    runId: '',
    seq: 0,
    at: 0,
  };
  if (settlement.attachments) event.attachments = settlement.attachments;
  if (settlement.truncation) event.truncation = settlement.truncation;
  if (settlement.failure) event.failure = settlement.failure;
  if (settlement.untrusted) event.untrusted = true;
  if (settlement.trustedValues && settlement.trustedValues.length > 0)
    event.trustedValues = settlement.trustedValues;
  const written = trace.emit(event, now);
  return written ? written.then(() => settlement) : settlement;
}
