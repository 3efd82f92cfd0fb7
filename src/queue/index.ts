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
