import type { ModelResponse, Usage } from '../model/model.js';

/** One tier's part in answering a request, in the order the cascade tried them. */
export type CascadeAttempt =
  | {
      kind: 'answered';
      tier: number;
      name: string;
      usage?: Usage;
      /** At the cascade's `prices`, when it has them. */
      costUsd?: number;
      durationMs: number;
    }
  | {
      /** This tier answered, a trigger sent it on. */
      kind: 'escalated';
      tier: number;
      name: string;
      trigger: string;
      reason: string;
      score?: number;
      usage?: Usage;
      costUsd?: number;
      /** What deciding cost (a judge's call), at the cascade's `prices`. */
      triggerCostUsd?: number;
      durationMs: number;
    }
  | {
      /** Its circuit breaker was open: no call, no spend. */
      kind: 'skipped';
      tier: number;
      name: string;
      reason: 'breaker_open';
      retryInMs: number;
    }
  | {
      /** The call threw; the tier has a breaker, so the cascade moved on. */
      kind: 'failed';
      tier: number;
      name: string;
      error: string;
      durationMs: number;
    };

/**
 * What a cascade did for one request, carried on the answer as `response.routing` and so in the
 * trace's `model-response` event: which tier answered, every escalation with its trigger, reason
 * and cost, every tier skipped for an open breaker.
 */
export interface CascadeRecord {
  version: 1;
  /** The tier whose answer was returned. */
  answeredBy: { tier: number; name: string };
  attempts: CascadeAttempt[];
  /**
   * True when a trigger asked for escalation but no later tier could answer (breakers open, calls
   * failed): the answer is the last one a trigger doubted.
   */
  degraded: boolean;
}

/** The cascade's record on an answer (or in a trace's `model-response` event), if a cascade gave it. */
export function cascadeRecordOf(response: ModelResponse | undefined): CascadeRecord | undefined {
  const routing = (response as { routing?: unknown } | undefined)?.routing;
  if (typeof routing !== 'object' || routing === null) return undefined;
  const record = routing as Partial<CascadeRecord>;
  return record.version === 1 && Array.isArray(record.attempts) && record.answeredBy
    ? (record as CascadeRecord)
    : undefined;
}
