import { failedCallCharge } from '../../budget/failed-call-charge.js';
import { isJobBudgetExceeded, type JobBudget, type JobBudgetExceeded } from '../../budget/job-budget.js';
import type { ModelResponse } from '../../model/model.js';
import type { PreparedCall } from '../loop-state.js';
import { isLoopStop, LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';

/** The `over_budget` outcome of a job that ran out, naming its spender. */
export function jobOutcome(exceeded: JobBudgetExceeded, phase: 'before-call' | 'during-call'): Outcome {
  const outcome: Outcome = {
    kind: 'over_budget',
    budget: exceeded.budget,
    limit: exceeded.limit,
    actual: exceeded.actual,
    phase,
    spender: exceeded.spender,
  };
  if (exceeded.unpriced !== undefined) outcome.unpriced = exceeded.unpriced;
  return outcome;
}

/**
 * A model call charged to the job: its maximum reserved before `call` runs (the prepared prefill
 * plus `maxOutputTokens`, at the prepared model's price), settled to the answer's usage, released
 * or kept when it fails (see `failedCallCharge`; an abort keeps it). A refusal ends the run
 * `over_budget` before anything is sent. Only runs with a job budget come here.
 */
export function chargedCall(
  job: JobBudget,
  spender: string,
  prepared: PreparedCall,
  call: () => Promise<ModelResponse>,
): Promise<ModelResponse> {
  const reserved = job.reserve({
    spender,
    model: prepared.model.name,
    inputTokens: prepared.contextTokens,
    maxOutputTokens: prepared.maxOutputTokens,
  });
  if (!reserved.ok)
    return Promise.reject(new LoopStop(jobOutcome(reserved.exceeded, 'before-call'), 'before-call'));
  const { reservation } = reserved;
  return call().then(
    (response) => {
      job.settle(reservation, response?.usage, response?.model);
      return response;
    },
    (thrown: unknown) => {
      // A refusal deeper down (a retry the job could not afford) sent nothing this call was billed for.
      if (isJobBudgetExceeded(thrown)) job.release(reservation);
      // An abort (the run's signal, the wall clock) or a call cut off after it was sent may be billed.
      else if (isLoopStop(thrown) || failedCallCharge(thrown) === 'keep') job.keep(reservation);
      else job.release(reservation);
      throw thrown;
    },
  );
}
