import type { ApprovalRequest, ApprovalVerdict } from '../approval.js';
import type { CallPlan, CallSettlement } from '../call-plan.js';
import type { LoopState, PreparedCall } from '../loop-state.js';
import { statsOf } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';
import { approvalIdOf, type ProposedCall } from './proposed-call.js';

type Planned = { ends: Outcome } | { plans: CallPlan[] };

/**
 * Plan the batch whole before any call runs: match verdicts to calls by approval id (a verdict for a
 * changed call is `stale`), then let the dispatcher decide each call. If any call needs a person,
 * the run pauses with every request and nothing in the batch has run. Synchronous when the
 * dispatcher's plans and the sinks are.
 */
export function planBatch(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  thought: string,
  verdicts: readonly ApprovalVerdict[] | undefined,
  offered: PreparedCall['offered'],
): Planned | Promise<Planned> {
  if (verdicts && verdicts.length > 0)
    return planWithVerdicts(state, step, proposed, thought, verdicts, offered);
  return planFrom(state, step, proposed, thought, undefined, undefined, offered, undefined, 0);
}

/** Records each verdict (`stale` when its call changed), then plans with them. */
async function planWithVerdicts(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  thought: string,
  verdicts: readonly ApprovalVerdict[],
  offered: PreparedCall['offered'],
): Promise<Planned> {
  const { trace } = state;
  // Approval ids are computed only when some verdict or request needs one.
  const ids = proposed.map(approvalIdOf);
  const verdictById = new Map<string, ApprovalVerdict>();
  const live = new Set(ids);
  for (const verdict of verdicts) {
    const current = live.has(verdict.approvalId);
    const written = trace.emit({
      type: 'approval',
      step,
      approvalId: verdict.approvalId,
      decision: current ? verdict.decision : 'stale',
      by: verdict.by ?? null,
      reason: verdict.decision === 'deny' ? verdict.reason : null,
      ...(verdict.decision === 'edit' ? { input: verdict.input } : {}),
    });
    if (written) await written;
    if (current) verdictById.set(verdict.approvalId, verdict);
  }
  return planFrom(state, step, proposed, thought, ids, verdictById, offered, undefined, 0);
}

/**
 * Plans calls from `from` on into `plans`; goes async only at a plan that is a promise. The list is
 * made at the first plan (a list grown by push from empty reserves 17 slots; most batches hold one).
 */
function planFrom(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  thought: string,
  ids: readonly string[] | undefined,
  verdictById: ReadonlyMap<string, ApprovalVerdict> | undefined,
  offered: PreparedCall['offered'],
  planned: CallPlan[] | undefined,
  from: number,
): Planned | Promise<Planned> {
  let plans = planned;
  const { setup } = state;
  for (let index = from; index < proposed.length; index++) {
    const { call, canonical } = proposed[index] as ProposedCall;
    const verdict = ids && verdictById ? verdictById.get(ids[index] as string) : undefined;
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
    const plan = setup.dispatcher.plan(request, state.trace.write);
    if (plan instanceof Promise)
      return plan.then((settled) => {
        const list = withPlan(plans, checkedPlan(settled, verdict));
        return planFrom(state, step, proposed, thought, ids, verdictById, offered, list, index + 1);
      });
    plans = withPlan(plans, checkedPlan(plan, verdict));
  }
  return requestsOf(state, step, proposed, thought, ids, verdictById, plans ?? []);
}

function withPlan(plans: CallPlan[] | undefined, plan: CallPlan): CallPlan[] {
  if (plans === undefined) return [plan];
  plans.push(plan);
  return plans;
}

/** A plan as the batch runs it: edited calls noted; a failed or stopped plan ends the run. */
function checkedPlan(planned: CallPlan, verdict: ApprovalVerdict | undefined): CallPlan {
  const plan = verdict?.decision === 'edit' ? withEditNote(planned, verdict.input) : planned;
  if (plan.kind === 'failed')
    throw new LoopStop({ kind: 'hard_error', source: plan.source, error: plan.error }, 'before-call');
  if (plan.kind === 'stopped') throw new LoopStop(undefined, 'during-call');
  return plan;
}

/** The plans, or the pause with every approval request the batch needs. */
function requestsOf(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  thought: string,
  ids: readonly string[] | undefined,
  verdictById: ReadonlyMap<string, ApprovalVerdict> | undefined,
  plans: CallPlan[],
): Planned | Promise<Planned> {
  let requests: ApprovalRequest[] | undefined;
  for (let index = 0; index < plans.length; index++) {
    const plan = plans[index] as CallPlan;
    if (plan.kind !== 'approval') continue;
    const approvalId = ids ? (ids[index] as string) : approvalIdOf(proposed[index] as ProposedCall);
    requests ??= [];
    requests.push({ ...plan.request, approvalId, reason: thought });
  }
  if (requests === undefined) {
    state.pending = null;
    return { plans };
  }
  return paused(state, step, proposed, thought, verdictById, requests);
}

async function paused(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  thought: string,
  verdictById: ReadonlyMap<string, ApprovalVerdict> | undefined,
  requests: ApprovalRequest[],
): Promise<Planned> {
  for (const request of requests) {
    statsOf(state, request.tool).approvalsRequested++;
    const written = state.trace.emit({ type: 'approval-request', step, request });
    if (written) await written;
  }
  const kept = verdictById ? [...verdictById.values()] : [];
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
