import type { ToolUseBlock } from '../../model/content.js';
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
export async function runBatch(
  state: LoopState,
  step: number,
  calls: readonly ToolUseBlock[],
  plans: readonly CallPlan[],
): Promise<CallSettlement[]> {
  const { setup, trace } = state;
  const { clock, counter } = setup;
  const runtime = new BatchRuntime(clock, state.run.signal, state.deadlines);
  state.batch = runtime;
  let fatal: CallSettlement | undefined;
  let settlements: CallSettlement[];
  try {
    settlements = await mapConcurrent(plans, setup.limits.toolConcurrency, async (plan, index) => {
      const call = calls[index] as ToolUseBlock;
      const startedAt = clock.now();
      const settlement =
        plan.kind === 'settled'
          ? plan.settlement
          : await (plan as Extract<CallPlan, { kind: 'execute' }>).execute(runtime);
      if ((settlement.fatal || settlement.failure) && !fatal) {
        fatal = settlement;
        runtime.abort({ type: 'fatal_sibling', callId: call.id });
      }
      if (trace.on) {
        const now = clock.now();
        await trace.emit(
          {
            type: 'tool-result',
            step,
            callId: call.id,
            tool: call.name,
            status: settlement.status,
            content: settlement.content,
            isError: settlement.isError,
            resultTokens: counter.block({
              type: 'tool_result',
              toolUseId: call.id,
              content: settlement.content,
              isError: settlement.isError,
              ...(settlement.attachments ? { attachments: settlement.attachments } : {}),
            }),
            ...(settlement.attachments ? { attachments: settlement.attachments } : {}),
            durationMs: now - startedAt,
            error: settlement.error,
            ...(settlement.truncation ? { truncation: settlement.truncation } : {}),
            ...(settlement.failure ? { failure: settlement.failure } : {}),
            ...(settlement.untrusted ? { untrusted: true } : {}),
            ...(settlement.trustedValues && settlement.trustedValues.length > 0
              ? { trustedValues: settlement.trustedValues }
              : {}),
          },
          now,
        );
      }
      return settlement;
    });
  } finally {
    state.batch = undefined;
    runtime.dispose();
  }
  if (state.run.signal.aborted) throw new LoopStop(undefined, 'during-call');
  const failed = fatal as CallSettlement | undefined;
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
