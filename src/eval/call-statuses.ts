import type { ToolCallStatus } from '../trace/events.js';

/** The model asked wrong: arguments that are not JSON, or fail the tool's input schema. */
export const malformedStatuses: ReadonlySet<ToolCallStatus> = new Set(['invalid_json', 'invalid_input']);

/** The tool ran and failed: it threw, timed out, was aborted, or returned output that failed its own checks. */
export const toolFailedStatuses: ReadonlySet<ToolCallStatus> = new Set([
  'error',
  'timeout',
  'fatal',
  'aborted',
  'validation_error',
  'invalid_output',
]);

/** The tool ran (its side effects happened), whatever came back. */
export const executedStatuses: ReadonlySet<ToolCallStatus> = new Set(['ok', ...toolFailedStatuses]);

/** The call did no useful work: refused before running, blocked, or failed. */
export const unproductiveStatuses: ReadonlySet<ToolCallStatus> = new Set([
  ...malformedStatuses,
  ...toolFailedStatuses,
  'unknown_tool',
  'denied',
  'blocked_repeat',
  'blocked_tainted',
]);
