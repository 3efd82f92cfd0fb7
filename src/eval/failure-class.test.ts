import { describe, expect, it } from 'vitest';
import type { Outcome } from '../loop/outcome.js';
import type { ToolCallStatus, TraceEvent } from '../trace/events.js';
import type { TrialTrajectory } from './eval-types.js';
import { classifyFailure } from './failure-class.js';

const trajectory: TrialTrajectory = {
  steps: 2,
  toolCalls: 1,
  invalidToolCalls: 0,
  unknownToolCalls: 0,
  repeatedCalls: 0,
  wastedSteps: 0,
  terminal: 'answered',
};
const lastResult = (status: ToolCallStatus) =>
  [{ type: 'tool-result', status, step: 1, callId: 'c', tool: 't' }] as unknown as TraceEvent[];
const wrongAfter = (status: ToolCallStatus) =>
  classifyFailure({
    outcome: { kind: 'answered', text: 'x' },
    trajectory,
    predicatePassed: false,
    trace: lastResult(status),
  });

describe('classifyFailure: a wrong answer is read against the last result it answered on', () => {
  it.each([
    ['unknown_tool', 'hallucinated_tool'],
    ['invalid_json', 'validation_error'],
    ['invalid_input', 'validation_error'],
    // The tool ran and its output failed its own checks: the tool's failure, not a malformed call.
    ['validation_error', 'tool_failure'],
    ['invalid_output', 'tool_failure'],
    ['error', 'tool_failure'],
    ['timeout', 'tool_failure'],
    ['ok', 'wrong_answer'],
  ] as const)('%s → %s', (status, expected) => {
    expect(wrongAfter(status)).toBe(expected);
  });

  it('a step cap is a step cap whatever the predicate said', () => {
    const outcome: Outcome = { kind: 'step_limit', limit: 2, finalText: 'right', unexecutedCalls: [] };
    expect(classifyFailure({ outcome, trajectory, predicatePassed: true })).toBe('step_cap');
  });
});
