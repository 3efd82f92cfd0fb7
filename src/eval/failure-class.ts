import type { Outcome } from '../loop/outcome.js';
import type { ToolCallStatus, TraceEvent } from '../trace/events.js';
import { malformedStatuses, toolFailedStatuses } from './call-statuses.js';
import type { FailureClass, TrialTrajectory } from './eval-types.js';

/** What the classifier reads of a failed trial. */
export interface FailedTrial {
  outcome: Outcome;
  trajectory: TrialTrajectory;
  /** The outcome predicate held (so the trial failed on its trajectory expectations). */
  predicatePassed: boolean;
  /** The trial's trace: a wrong answer is read against the last tool result before it. */
  trace?: readonly TraceEvent[];
}

/** The status of the last tool result in a trace, if any. */
function lastResultStatus(trace: readonly TraceEvent[] | undefined): ToolCallStatus | undefined {
  if (!trace) return undefined;
  for (let i = trace.length - 1; i >= 0; i--) {
    const event = trace[i] as TraceEvent;
    if (event.type === 'tool-result') return event.status;
  }
  return undefined;
}

/**
 * Why a failed trial failed. The outcome decides first: a step cap, a budget, a loop, a refusal, a
 * pause for a person each name themselves. A run that answered and was judged wrong is read
 * against the last tool result before the answer, the evidence it answered on: a call to a tool
 * that does not exist makes it `hallucinated_tool`, a call whose arguments were malformed or failed
 * the input schema `validation_error`, a call that errored, timed out or returned output that
 * failed the tool's own checks `tool_failure`; a wrong
 * answer after a good result is `wrong_answer`. Earlier mistakes the run recovered from are not
 * blamed (they show in the trajectory figures). An answer the predicate accepted that broke a
 * trajectory expectation is `trajectory`.
 */
export function classifyFailure(trial: FailedTrial): FailureClass {
  const { outcome } = trial;
  switch (outcome.kind) {
    case 'answered':
      if (trial.predicatePassed) return 'trajectory';
      return wrongAnswerClass(lastResultStatus(trial.trace));
    case 'step_limit':
      return 'step_cap';
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

function wrongAnswerClass(last: ToolCallStatus | undefined): FailureClass {
  if (last === 'unknown_tool') return 'hallucinated_tool';
  if (last !== undefined && malformedStatuses.has(last)) return 'validation_error';
  if (last !== undefined && toolFailedStatuses.has(last)) return 'tool_failure';
  return 'wrong_answer';
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
