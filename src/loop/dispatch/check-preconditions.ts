import { errorInfo } from '../../errors/error-info.js';
import type { AnyTool, Precondition, ToolContext } from '../../tools/define-tool.js';
import { guard } from '../boundary.js';
import type { CallPlan } from '../call-plan.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import { errorContent, planOf, settled } from './settlement.js';

/**
 * Stage 3: the tool's semantic checks, after authorization and before any side effect. A failed
 * check tells the model which field and why; a throw (or something that is not a list of problems)
 * ends the run `hard_error` with source `precondition`. Returns undefined when the call may go on.
 */
export function checkPreconditions(
  tool: AnyTool,
  input: unknown,
  context: ToolContext,
  signal: AbortSignal,
): MaybePromise<CallPlan | undefined> {
  return andThen(
    guard('precondition', () => tool.preconditions(input, context), signal),
    (answer) => {
      if (!answer.ok) return planOf(answer);
      try {
        return refusalOf(tool, answer.value);
      } catch (thrown) {
        return { kind: 'failed', source: 'precondition', error: errorInfo(thrown) };
      }
    },
  );
}

function refusalOf(tool: AnyTool, problems: Precondition[]): CallPlan | undefined {
  if (!Array.isArray(problems))
    throw new TypeError(`${tool.name}: preconditions must return an array of problems`);
  if (problems.length === 0) return undefined;
  const text = problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ');
  const refusal = settled(
    'invalid_input',
    errorContent('precondition_failed', `${tool.name} was not run: ${text}`),
  );
  // A precondition's message may quote the world (a payee's own note): from a tool whose output is
  // untrusted, it taints the context like a thrown ToolError would.
  if (!tool.trustedOutput) refusal.settlement.untrusted = true;
  return refusal;
}
