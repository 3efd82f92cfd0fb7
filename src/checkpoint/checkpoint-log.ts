import { isReinsError, ReinsError } from '../errors/reins-error.js';
import { parseRunState, type RunState } from '../loop/run-state.js';
import { applyCheckpointDeltas, type CheckpointDelta } from './checkpoint-delta.js';

/** One stored write of a run's checkpoint log, as JSON text with the revision it was committed at. */
export interface CheckpointLogEntry {
  revision: number;
  body: string;
}

/**
 * Parses one stored delta, checking it is the delta committed at `revision`: a body that is not
 * JSON, names another revision or has lists of the wrong shape is `corrupt_state`.
 */
export function parseCheckpointDelta(entry: CheckpointLogEntry, runId: string): CheckpointDelta {
  let value: unknown;
  try {
    value = JSON.parse(entry.body);
  } catch (cause) {
    throw new ReinsError(
      'corrupt_state',
      `checkpoint delta ${entry.revision} for ${runId} is not valid JSON`,
      { cause },
    );
  }
  const delta = value as Partial<CheckpointDelta> | null;
  // Lists and maps a delta did not change are left out of it (deltas written before that have them all).
  if (
    typeof delta !== 'object' ||
    delta === null ||
    delta.revision !== entry.revision ||
    (delta.messages !== undefined && !Array.isArray(delta.messages?.items)) ||
    (delta.repeatCounts !== undefined && !Array.isArray(delta.repeatCounts))
  )
    throw new ReinsError('corrupt_state', `checkpoint delta ${entry.revision} for ${runId} is malformed`);
  return delta as CheckpointDelta;
}

/**
 * The state a stored log holds: its last snapshot (whose revision is the entry's, whatever its body
 * says) with the deltas after it applied in order, checked against the run's head revision. A
 * log that does not reach `headRevision`, skips a revision or does not parse is `corrupt_state`:
 * a store never hands back a state other than the one it last committed.
 */
export function replayCheckpointLog(
  runId: string,
  headRevision: number,
  snapshot: CheckpointLogEntry | undefined,
  deltas: readonly CheckpointLogEntry[],
): RunState {
  if (!snapshot) throw new ReinsError('corrupt_state', `checkpoint for ${runId} has no snapshot`);
  const base: RunState = { ...parseRunState(snapshot.body), revision: snapshot.revision };
  let state: RunState;
  try {
    state = applyCheckpointDeltas(
      base,
      deltas.map((entry) => parseCheckpointDelta(entry, runId)),
    );
  } catch (cause) {
    if (isReinsError(cause)) throw cause;
    throw new ReinsError('corrupt_state', `checkpoint deltas for ${runId} do not apply`, { cause });
  }
  if ((state.revision ?? 0) !== headRevision)
    throw new ReinsError(
      'corrupt_state',
      `checkpoint for ${runId} is at revision ${headRevision} but its log ends at ${String(state.revision)}`,
    );
  return state;
}

/** The JSON a commit stores: the writer's `body` when it has one, else the snapshot or delta serialized. */
export function commitBody(commit: {
  revision: number;
  body?: string;
  snapshot?: RunState | undefined;
  delta?: CheckpointDelta | undefined;
}): string {
  if (commit.body !== undefined) return commit.body;
  return commit.snapshot
    ? JSON.stringify({ ...commit.snapshot, revision: commit.revision })
    : JSON.stringify(commit.delta);
}
