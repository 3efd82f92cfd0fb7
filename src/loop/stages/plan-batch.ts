import type { ApprovalRequest, ApprovalVerdict } from '../approval.js';
import type { CallPlan, CallSettlement } from '../call-plan.js';
import type { LoopState, PreparedCall } from '../loop-state.js';
import { statsOf } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';
import { approvalIdOf, type ProposedCall } from './proposed-call.js';

/**
 * Plan the batch whole before any call runs: match verdicts to calls by approval id (a verdict for a
 * changed call is `stale`), then let the dispatcher decide each call. If any call needs a person,
 * the run pauses with every request and nothing in the batch has run.
 */
export async function planBatch(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  thought: string,
  verdicts: readonly ApprovalVerdict[] | undefined,
  offered: PreparedCall['offered'],
): Promise<{ ends: Outcome } | { plans: CallPlan[] }> {
  const { trace, setup } = state;
  // Approval ids are computed only when some verdict or request needs one.
  const ids = verdicts && verdicts.length > 0 ? proposed.map(approvalIdOf) : undefined;
  const verdictById = new Map<string, ApprovalVerdict>();
  if (verdicts && ids) {
    const live = new Set(ids);
    for (const verdict of verdicts) {
      const current = live.has(verdict.approvalId);
      await trace.emit({
        type: 'approval',
        step,
        approvalId: verdict.approvalId,
        decision: current ? verdict.decision : 'stale',
        by: verdict.by ?? null,
        reason: verdict.decision === 'deny' ? verdict.reason : null,
        ...(verdict.decision === 'edit' ? { input: verdict.input } : {}),
      });
      if (current) verdictById.set(verdict.approvalId, verdict);
    }
  }
  const emit = trace.emit.bind(trace);
  const plans: CallPlan[] = [];
  for (let index = 0; index < proposed.length; index++) {
    const { call, canonical } = proposed[index] as ProposedCall;
    const verdict = ids ? verdictById.get(ids[index] as string) : undefined;
    const request = {
      call,
      canonicalInput: canonical,
      step,
      verdict,
      taint: state.taint,
      terminal: state.terminal,
      offered,
      signal: state.run.signal,
    };
    const planned = setup.dispatcher.plan(request, emit);
    let plan = planned instanceof Promise ? await planned : (planned as CallPlan);
    if (verdict?.decision === 'edit') plan = withEditNote(plan, verdict.input);
    if (plan.kind === 'failed')
      throw new LoopStop({ kind: 'hard_error', source: plan.source, error: plan.error }, 'before-call');
    if (plan.kind === 'stopped') throw new LoopStop(undefined, 'during-call');
    plans.push(plan);
  }
  const requests: ApprovalRequest[] = [];
  plans.forEach((plan, index) => {
    if (plan.kind !== 'approval') return;
    const approvalId = ids ? (ids[index] as string) : approvalIdOf(proposed[index] as ProposedCall);
    requests.push({ ...plan.request, approvalId, reason: thought });
  });
  if (requests.length === 0) {
    state.pending = null;
    return { plans };
  }
  for (const request of requests) {
    statsOf(state, request.tool).approvalsRequested++;
    await trace.emit({ type: 'approval-request', step, request });
  }
  const kept = [...verdictById.values()];
  state.pending = {
    step,
    calls: proposed.map((entry) => entry.call),
    thought,
    ...(kept.length > 0 ? { verdicts: kept } : {}),
  };
  return { ends: { kind: 'awaiting_approval', requests } };
}

/**
 * The model proposed one input and a person ran another: its result says so, so the model reasons
 * about the call that happened. The transcript keeps the model's original call; the `approval`
 * event records the edit.
 */
function withEditNote(plan: CallPlan, input: unknown): CallPlan {
  let shown: string;
  try {
    shown = JSON.stringify(input) ?? 'null';
  } catch {
    shown = '(unprintable input)';
  }
  const note = (settlement: CallSettlement): CallSettlement => ({
    ...settlement,
    content: `[A person edited this call before it ran; it ran with input ${shown}, not the input you sent.]\n${settlement.content}`,
  });
  if (plan.kind === 'settled') return { kind: 'settled', settlement: note(plan.settlement) };
  if (plan.kind === 'execute') {
    const execute = plan.execute;
    return { kind: 'execute', execute: async (runtime) => note(await execute(runtime)) };
  }
  return plan;
}
