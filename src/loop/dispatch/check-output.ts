import { type ErrorInfo, errorInfo } from '../../errors/error-info.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { type Guarded, guard } from '../boundary.js';
import type { CallSettlement } from '../call-plan.js';
import type { MaybePromise } from './maybe-async.js';
import { base, errorContent } from './settlement.js';

/** A result the model must not see, `stopped` when the run's signal abandoned the check, or undefined: it may. */
export type OutputCheck = CallSettlement | 'stopped' | undefined;

/**
 * Stage 9: the tool's output schema and invariants, inside the boundary. Broken checks keep the
 * result from the model (`validation_error`, terminal); a check that throws, or returns something
 * other than a list, also ends the run `hard_error` with source `invariant`.
 */
export function checkOutput(tool: AnyTool, output: unknown, signal: AbortSignal): MaybePromise<OutputCheck> {
  const answer = guard('invariant', () => tool.checkOutput(output), signal);
  // A closure only for an asynchronous check.
  if (answer instanceof Promise) return answer.then((settled) => verdictOf(tool, settled));
  return verdictOf(tool, answer);
}

function verdictOf(tool: AnyTool, answer: Guarded<string[]>): OutputCheck {
  if (!answer.ok) return answer.stopped ? 'stopped' : checkFailed(tool, answer.error);
  try {
    return rejectionOf(tool, answer.value);
  } catch (thrown) {
    return checkFailed(tool, errorInfo(thrown));
  }
}

function rejectionOf(tool: AnyTool, problems: string[]): CallSettlement | undefined {
  if (!Array.isArray(problems))
    throw new TypeError(`${tool.name}: output checks must return an array of problems`);
  if (problems.length === 0) return undefined;
  return {
    ...base(
      'validation_error',
      errorContent(
        'validation_error',
        `${tool.name} returned data that failed its checks, so it is not shown. Do not retry the same call; try another approach or tell the user.`,
      ),
      true,
    ),
    error: { name: 'OutputValidationError', message: problems.join('; ') },
    terminal: true,
  };
}

function checkFailed(tool: AnyTool, error: ErrorInfo): CallSettlement {
  return {
    ...base(
      'validation_error',
      errorContent(
        'validation_error',
        `${tool.name} returned data its checks could not judge, so it is not shown. Do not retry the same call; try another approach or tell the user.`,
      ),
      true,
    ),
    error,
    terminal: true,
    failure: { source: 'invariant', error },
  };
}
