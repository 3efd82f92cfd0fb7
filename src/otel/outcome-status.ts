import { describeOutcome, type Outcome } from '../loop/outcome.js';

/**
 * The error status an agent span gets for its outcome, or undefined (`answered`, and the pause of
 * `awaiting_approval`). Every other ending is a failure, silent or not, so backends that chart error
 * rates by status count the runs that gave up, looped or ran out of budget, not only the ones that
 * threw. `error.type` is the outcome kind (`hard_error` adds its source: `hard_error.tool`).
 */
export function outcomeStatus(outcome: Outcome): { errorType: string; message: string } | undefined {
  if (outcome.kind === 'answered' || outcome.kind === 'awaiting_approval') return undefined;
  const errorType = outcome.kind === 'hard_error' ? `hard_error.${outcome.source}` : outcome.kind;
  return { errorType, message: describeOutcome(outcome) };
}
