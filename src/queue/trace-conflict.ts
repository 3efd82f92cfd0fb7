import { ReinsError } from '../errors/reins-error.js';

/**
 * Thrown by a {@link RunEventStore} append whose events do not continue the run's `seq`: another
 * worker wrote them first. The run that gets it ends `hard_error` (source `trace`), which is what a
 * worker that lost its run should do.
 */
export function traceConflict(runId: string, expected: number, got: number): ReinsError {
  return new ReinsError(
    'trace_conflict',
    `run ${runId}: event seq ${got} does not continue the log (next is ${expected}); another worker holds the run`,
  );
}
