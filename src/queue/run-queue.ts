import type { ApprovalRequest, ApprovalVerdict } from '../loop/approval.js';
import type { Outcome } from '../loop/outcome.js';
import type { Actor } from '../tools/define-tool.js';
import type { TraceEvent } from '../trace/events.js';

/**
 * What a queued run carries: names and data only, never functions. The worker builds the run
 * (model, tools, limits) from the agent definition registered under `agent`.
 */
export interface RunRequest {
  /** The registered agent definition's name. */
  agent: string;
  /** The user's message. */
  input: string;
  /** The end user the run acts for; every tool call is authorized against this actor. */
  actor: Actor;
  /** Reuse an id (an enqueue with an id already queued or run is refused, not run twice). */
  runId?: string;
  /** Lower runs first, as BullMQ's priorities. @default 0 */
  priority?: number;
  /** Per-tenant concurrency and rate limits key on this. @default actor.id */
  tenant?: string;
}

/** Where a queued run is. `ended` runs carry their outcome. */
export type RunRecordStatus = 'queued' | 'running' | 'awaiting_approval' | 'cancelling' | 'ended';

/** What the service shows about one run: read by `GET /runs/:id`, listed per actor. */
export interface RunRecord {
  runId: string;
  agent: string;
  /** The owner: every read is scoped to this actor. */
  actorId: string;
  tenant: string;
  status: RunRecordStatus;
  /** Present when `status` is `ended` or `awaiting_approval`. */
  outcome?: Outcome;
  /** The calls waiting for a verdict, when `awaiting_approval`. */
  pendingApprovals?: ApprovalRequest[];
  /** Completed steps so far. */
  steps: number;
  billedTokens: number;
  costUsd: number;
  /** How many times a worker started (or resumed) this run: above 1 after a crash or an approval. */
  attempts: number;
  createdAt: number;
  updatedAt: number;
}

/** The answer to a cancel: reached the run, or why not. */
export type CancelResult =
  | { ok: true; status: RunRecordStatus }
  | { ok: false; reason: 'not_found' | 'already_ended' };

/** The answer to a set of verdicts for a paused run. */
export type VerdictResult =
  | { ok: true }
  | {
      ok: false;
      /** `stale_approval`: a verdict names an approval id the run is not waiting on. */
      reason: 'not_found' | 'not_awaiting_approval' | 'stale_approval';
      /** The approval ids that did not match, for `stale_approval`. */
      staleApprovalIds?: string[];
    };

/**
 * Runs as durable jobs. `reins/bullmq` has the BullMQ implementation (Redis), `reins/queue` an
 * in-process one for tests and single-process services (`InProcessRunQueue`); another engine
 * (pg-boss on PostgreSQL) implements the same interface.
 */
export interface RunQueue {
  /** Queues a run; refuses (`duplicate_run`) an id that already exists. */
  enqueue(
    request: RunRequest,
  ): Promise<{ ok: true; runId: string } | { ok: false; reason: 'duplicate_run'; runId: string }>;
  /** Reaches the run's `AbortSignal` on whichever worker holds it, or removes it from the queue. */
  cancel(runId: string, by: string): Promise<CancelResult>;
  /** Resumes a paused run with verdicts, on any worker; verdicts for stale approval ids are refused. */
  submitVerdicts(runId: string, verdicts: ApprovalVerdict[]): Promise<VerdictResult>;
  close(): Promise<void>;
}

/** The runs' records, shared by every worker and the service. */
export interface RunRegistry {
  get(runId: string): Promise<RunRecord | undefined>;
  /** The actor's runs, newest first. */
  list(filter: { actorId: string; limit?: number }): Promise<RunRecord[]>;
}

/**
 * Every run's trace, appended by whichever worker holds the run and read by the service. Events
 * keep the trace's `seq`; a resumed run's events continue the same sequence, so a reader following
 * from `afterSeq` sees no gap and no duplicate.
 */
export interface RunEventLog {
  append(runId: string, events: readonly TraceEvent[]): Promise<void>;
  /** Events with `seq > afterSeq`, in order. */
  read(runId: string, afterSeq: number, limit?: number): Promise<TraceEvent[]>;
  /** Events with `seq > afterSeq` as they arrive, until the run ends or `signal` aborts. */
  follow(runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<TraceEvent>;
}
