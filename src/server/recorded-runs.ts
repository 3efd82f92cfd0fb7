import type { ApprovalRequest } from '../loop/approval.js';
import type {
  CancelResult,
  RunEventLog,
  RunQueue,
  RunRecord,
  RunRegistry,
  VerdictResult,
} from '../queue/run-queue.js';
import type { TraceEvent } from '../trace/events.js';

/** A recorded trace as the run service's three stores, read-only. */
export interface RecordedRuns {
  queue: RunQueue;
  runs: RunRegistry;
  events: RunEventLog;
}

function recordOf(runId: string, trace: readonly TraceEvent[], actorId: string): RunRecord {
  const start = trace.find((event) => event.type === 'run-start');
  const last = trace.at(-1);
  let end: Extract<TraceEvent, { type: 'run-end' }> | undefined;
  let steps = 0;
  let segments = 0;
  for (const event of trace) {
    if (event.type === 'run-end') end = event;
    if (event.type === 'run-start') segments += 1;
    if (event.type === 'step-end') steps = Math.max(steps, event.step);
  }
  const paused = end?.outcome.kind === 'awaiting_approval';
  const pendingApprovals: ApprovalRequest[] =
    end?.outcome.kind === 'awaiting_approval' ? end.outcome.requests : [];
  return {
    runId,
    agent: start?.type === 'run-start' ? start.model : 'recorded',
    actorId,
    tenant: actorId,
    status: paused ? 'awaiting_approval' : 'ended',
    ...(end ? { outcome: end.outcome } : {}),
    ...(paused ? { pendingApprovals } : {}),
    steps: end ? Math.max(steps, end.steps) : steps,
    billedTokens: end?.billedTokens ?? 0,
    costUsd: end?.costUsd ?? 0,
    attempts: segments,
    createdAt: trace[0]?.at ?? 0,
    updatedAt: last?.at ?? 0,
  };
}

const refused = async (): Promise<never> => {
  throw new TypeError('a recorded trace is read-only');
};

/**
 * The runs of a recorded trace (`reins trace view`), every one owned by `actorId`: the registry
 * answers from the events, the event log replays them and ends, and the queue refuses every write
 * (the service runs with `readOnly`, so it is never asked).
 */
export function recordedRuns(trace: readonly TraceEvent[], actorId: string): RecordedRuns {
  const byRun = new Map<string, TraceEvent[]>();
  for (const event of trace) {
    const list = byRun.get(event.runId) ?? [];
    list.push(event);
    byRun.set(event.runId, list);
  }
  const records = new Map([...byRun].map(([runId, events]) => [runId, recordOf(runId, events, actorId)]));
  const runs: RunRegistry = {
    get: async (runId) => records.get(runId),
    list: async ({ actorId: owner, limit }) =>
      [...records.values()]
        .filter((record) => record.actorId === owner)
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, limit ?? 50),
  };
  const events: RunEventLog = {
    append: refused,
    read: async (runId, afterSeq, limit) =>
      (byRun.get(runId) ?? []).filter((event) => event.seq > afterSeq).slice(0, limit ?? Infinity),
    async *follow(runId, afterSeq, signal) {
      for (const event of byRun.get(runId) ?? []) {
        if (signal.aborted) return;
        if (event.seq > afterSeq) yield event;
      }
    },
  };
  const queue: RunQueue = {
    enqueue: refused,
    cancel: (): Promise<CancelResult> => refused(),
    submitVerdicts: (): Promise<VerdictResult> => refused(),
    close: async () => {},
  };
  return { queue, runs, events };
}
