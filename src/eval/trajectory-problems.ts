import type { TraceEvent } from '../trace/events.js';
import { executedStatuses } from './call-statuses.js';
import type { EvalCase } from './eval-types.js';

const noProblems: readonly string[] = Object.freeze([]);

/** The trajectory expectations a trial broke, each as a sentence (none when the case sets none). */
export function trajectoryProblems(
  kase: EvalCase<unknown>,
  trace: readonly TraceEvent[],
  steps: number,
): readonly string[] {
  const expected = kase.trajectory;
  if (!expected) return noProblems;
  const problems: string[] = [];
  const succeeded = new Set<string>();
  const executed = new Set<string>();
  for (const event of trace) {
    if (event.type !== 'tool-result') continue;
    if (event.status === 'ok') succeeded.add(event.tool);
    if (executedStatuses.has(event.status)) executed.add(event.tool);
  }
  for (const tool of expected.mustCall ?? [])
    if (!succeeded.has(tool)) problems.push(`${tool} was never called successfully`);
  for (const tool of expected.mustNotCall ?? []) if (executed.has(tool)) problems.push(`${tool} was called`);
  if (expected.maxSteps !== undefined && steps > expected.maxSteps)
    problems.push(`took ${steps} steps, more than ${expected.maxSteps}`);
  return problems;
}
