/**
 * `reins/queue`: agents behind a job queue. The contracts (RunQueue, RunRegistry, RunEventLog), named
 * agent definitions, the one executor every worker runs, and in-memory implementations that run in
 * this process. The BullMQ queue, its workers and the Redis registry and log are in `reins/bullmq`.
 */
export * from './agent-definition.js';
export * from './check-verdicts.js';
export * from './execute-run.js';
export * from './in-process-run-queue.js';
export * from './memory-run-event-log.js';
export * from './memory-run-registry.js';
export * from './run-event-sink.js';
export type {
  CancelResult,
  RunEventLog,
  RunQueue,
  RunRecord,
  RunRecordStatus,
  RunRegistry,
  RunRequest,
  VerdictResult,
} from './run-queue.js';
export * from './run-stores.js';
export * from './scripted-steps-agent.js';
export type { Admission, TenantLimits } from './tenant-limits.js';
export * from './trace-conflict.js';
