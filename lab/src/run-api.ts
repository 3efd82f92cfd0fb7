import type { ApprovalRequest, Outcome, TraceEvent } from '../../src/index.js';
import { readServerSentEvents } from './server-sent-events.js';

/** A run as `GET /runs/:id` shows it (`RunRecord` in `reins/queue`). */
export interface RunRecordView {
  runId: string;
  agent: string;
  actorId: string;
  status: 'queued' | 'running' | 'awaiting_approval' | 'cancelling' | 'ended';
  outcome?: Outcome;
  pendingApprovals?: ApprovalRequest[];
  steps: number;
  billedTokens: number;
  costUsd: number;
  attempts: number;
  createdAt: number;
  updatedAt: number;
}

/** What `GET /session` answers. */
export interface SessionView {
  /** `null`: no token, or one the service refused. */
  actorId: string | null;
  readOnly: boolean;
  agents: string[] | null;
}

/** A verdict as the page sends it (`by` is the token's). */
export type VerdictInput =
  | { approvalId: string; decision: 'approve' }
  | { approvalId: string; decision: 'deny'; reason: string }
  | { approvalId: string; decision: 'edit'; input: unknown };

/** An error the service answered with: its HTTP status and `{ error: { code, message } }`. */
export class RunApiError extends Error {
  override readonly name = 'RunApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What one event stream delivers: trace events, then the run's record when the trace ends. */
export type StreamItem = { kind: 'trace'; event: TraceEvent } | { kind: 'end'; record: RunRecordView };

/** The run service's API as the viewer calls it, relative to the page, with the token it is given. */
export function runApi(token: () => string | undefined) {
  const headers = (extra: Record<string, string> = {}) => {
    const value = token();
    return value ? { ...extra, Authorization: `Bearer ${value}` } : extra;
  };
  const call = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await fetch(path, {
      ...init,
      headers: headers(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    });
    const body = (await response.json().catch(() => undefined)) as
      | { error?: { code?: string; message?: string } }
      | undefined;
    if (!response.ok)
      throw new RunApiError(
        response.status,
        body?.error?.code ?? 'http_error',
        body?.error?.message ?? `HTTP ${response.status}`,
      );
    return body as T;
  };
  return {
    session: () => call<SessionView>('session'),
    list: () => call<{ runs: RunRecordView[] }>('runs').then((body) => body.runs),
    get: (runId: string) => call<RunRecordView>(`runs/${encodeURIComponent(runId)}`),
    start: (agent: string, input: string) =>
      call<{ runId: string }>('runs', { method: 'POST', body: JSON.stringify({ agent, input }) }),
    verdicts: (runId: string, verdicts: VerdictInput[]) =>
      call(`runs/${encodeURIComponent(runId)}/approvals`, {
        method: 'POST',
        body: JSON.stringify({ verdicts }),
      }),
    cancel: (runId: string) =>
      call(`runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST', body: '{}' }),
    /** The run's trace after `afterSeq` as it happens; ends with the run (or `signal`). */
    async *events(
      runId: string,
      afterSeq: number | undefined,
      signal: AbortSignal,
    ): AsyncGenerator<StreamItem> {
      const response = await fetch(`runs/${encodeURIComponent(runId)}/events`, {
        headers: headers(afterSeq === undefined ? {} : { 'Last-Event-ID': String(afterSeq) }),
        signal,
      });
      if (!response.ok || !response.body) {
        const body = (await response.json().catch(() => undefined)) as
          | { error?: { code?: string; message?: string } }
          | undefined;
        throw new RunApiError(response.status, body?.error?.code ?? 'http_error', body?.error?.message ?? '');
      }
      for await (const message of readServerSentEvents(response.body)) {
        if (message.event === 'trace') yield { kind: 'trace', event: JSON.parse(message.data) as TraceEvent };
        else if (message.event === 'end')
          yield { kind: 'end', record: JSON.parse(message.data) as RunRecordView };
      }
    },
  };
}

/** The client {@link runApi} returns. */
export type RunApi = ReturnType<typeof runApi>;
