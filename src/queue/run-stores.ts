import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { ApprovalVerdict } from '../loop/approval.js';
import type { TraceEvent } from '../trace/events.js';
import type { RunEventLog, RunRecord, RunRecordStatus, RunRegistry, RunRequest } from './run-queue.js';

/** Changes to a {@link RunRecord}: a field set to `undefined` is removed (`pendingApprovals` after a verdict). */
export type RunRecordPatch = { [K in Exclude<keyof RunRecord, 'runId'>]?: RunRecord[K] | undefined };

/**
 * The writing side of a {@link RunRegistry}: what queues and workers use. The service only reads.
 */
export interface RunRecordStore extends RunRegistry {
  /** Stores a new record; `false` (nothing written) when the run id already exists. */
  create(record: RunRecord): Promise<boolean>;
  /**
   * Applies `patch` when the record's status is one of `from` (any status when `from` is absent):
   * a compare-and-set, so two verdict submissions or a cancel racing a start change a run once.
   * Returns the record after the change, or `undefined` when it is absent or its status did not match.
   */
  update(
    runId: string,
    patch: RunRecordPatch,
    from?: readonly RunRecordStatus[],
  ): Promise<RunRecord | undefined>;
  /**
   * A worker takes the run: when its status is one of `from`, sets it `running`, counts the attempt
   * (`attempts + 1`) and stamps `updatedAt`, in one step. Returns the record after the change, or
   * `undefined` (nothing written) when it is absent or its status did not match. Lets the executor
   * take a run without reading its record first (one round trip fewer per run).
   * @default absent: the executor reads the record, then `update`s it
   */
  start?(runId: string, at: number, from: readonly RunRecordStatus[]): Promise<RunRecord | undefined>;
}

/** A run record's running figures, as each step's end leaves them. */
export interface RunProgress {
  steps: number;
  billedTokens: number;
  costUsd: number;
  updatedAt: number;
}

/**
 * The writing side of a {@link RunEventLog}. The log is authoritative for `seq`: an append whose
 * first event does not continue the run's sequence is refused (it throws), so a worker that lost
 * the run cannot interleave a second copy of a step, and a resumed run asks the log where to go on.
 */
export interface RunEventStore extends RunEventLog {
  /**
   * Appends `events` (refused, by throwing, unless the first continues the run's `seq`). With
   * `progress`, a log that {@link RunEventStore.recordsProgress | records progress} also sets those
   * figures on the run's record, in the same operation, when the record exists and has not ended.
   */
  append(runId: string, events: readonly TraceEvent[], progress?: RunProgress): Promise<void>;
  /**
   * True when an `append` given `progress` writes it to `registry`'s record of the run (the log
   * and the registry share a server and a key prefix). The executor then hands each step's figures
   * to the append instead of updating the record beside it: one write per step instead of two.
   * @default false
   */
  recordsProgress?(registry: RunRecordStore): boolean;
  /** The `seq` after the run's last event, or `undefined` when it has none. */
  nextSeq(runId: string): Promise<number | undefined>;
  /** The run has reached its terminal outcome: followers stop after its last event. */
  end(runId: string): Promise<void>;
  /**
   * True when an append this log was handed is applied before any commit made to `checkpoint`
   * after it was sent (one ordered connection to one server, or a log that applies an append when
   * it is called). The executor then sends a step's events and its checkpoint back to back instead
   * of waiting for the append's reply first: one round trip per step instead of two.
   * @default false (the executor waits for each append before the checkpoint that follows it)
   */
  orderedBefore?(checkpoint: AnyCheckpointStore): boolean;
}

/**
 * A job's payload: data only. `verdicts` is set on the job that resumes a paused run; `attempt`
 * tells resume jobs of one run apart.
 */
export interface RunJob {
  runId: string;
  request: RunRequest;
  verdicts?: ApprovalVerdict[];
}

/** A fresh record for a queued run. */
export function queuedRecord(runId: string, request: RunRequest, now: number): RunRecord {
  return {
    runId,
    agent: request.agent,
    actorId: request.actor.id,
    tenant: request.tenant ?? request.actor.id,
    status: 'queued',
    steps: 0,
    billedTokens: 0,
    costUsd: 0,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** Applies a patch to a record (a copy): `undefined` fields are removed. */
export function patchRecord(record: RunRecord, patch: RunRecordPatch): RunRecord {
  const next: Record<string, unknown> = { ...record };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  return next as unknown as RunRecord;
}
