import type { Outcome } from '../loop/outcome.js';
import type { FailureClass, TrialTrajectory } from './eval-types.js';

/** What the classifier reads of a failed trial. */
export interface FailedTrial {
  outcome: Outcome;
  trajectory: TrialTrajectory;
  /** The outcome predicate held (so the trial failed on its trajectory expectations). */
  predicatePassed: boolean;
}

/**
 * Why a failed trial failed. The outcome decides first: a step cap, a budget, a loop, a refusal, a
 * pause for a person each name themselves. A run that answered and was judged wrong is looked at
 * in its trace: a call to a tool that does not exist makes it `hallucinated_tool`, calls refused as
 * malformed that make up half or more of its calls make it `validation_error`; otherwise it is
 * `wrong_answer`. An answer the predicate accepted that broke a trajectory expectation is
 * `trajectory`.
 */
export function classifyFailure(trial: FailedTrial): FailureClass {
  const { outcome, trajectory } = trial;
  switch (outcome.kind) {
    case 'answered':
      if (trial.predicatePassed) return 'trajectory';
      if (trajectory.unknownToolCalls > 0) return 'hallucinated_tool';
      if (trajectory.toolCalls > 0 && trajectory.invalidToolCalls * 2 >= trajectory.toolCalls)
        return 'validation_error';
      return 'wrong_answer';
    case 'step_limit':
      return trial.predicatePassed ? 'trajectory' : 'step_cap';
    case 'over_budget':
      return outcome.budget === 'tool_errors' ? 'tool_failure' : 'budget';
    case 'looped':
      return 'looped';
    case 'gave_up':
      return 'gave_up';
    case 'hard_error':
      switch (outcome.source) {
        case 'tool':
          return 'tool_failure';
        case 'schema':
        case 'invariant':
        case 'precondition':
          return 'validation_error';
        case 'model':
        case 'empty_response':
        case 'malformed_response':
          return 'model_error';
        default:
          return 'harness_error';
      }
    case 'refused':
      return 'refused';
    case 'awaiting_approval':
      return 'needed_person';
    case 'truncated':
      return 'truncated';
    case 'cancelled':
      return 'cancelled';
    case 'stale_state':
      return 'harness_error';
  }
}

/** Every failure class, in the order reports list them. */
export const failureClasses = [
  'wrong_answer',
  'step_cap',
  'budget',
  'looped',
  'gave_up',
  'tool_failure',
  'validation_error',
  'hallucinated_tool',
  'refused',
  'needed_person',
  'model_error',
  'trajectory',
  'truncated',
  'cancelled',
  'harness_error',
] as const satisfies readonly FailureClass[];
