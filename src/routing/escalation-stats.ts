import type { Interval } from '../eval/eval-types.js';
import { wilsonInterval } from '../eval/wilson-interval.js';
import type { TraceEvent } from '../trace/events.js';
import { cascadeRecordOf } from './cascade-record.js';

/** What cascades did across a set of traces: the production side of a calibration. */
export interface EscalationStats {
  /** Model calls a cascade answered. */
  requests: number;
  /** Requests escalated at least once. */
  escalated: number;
  escalationRate: { estimate: number; interval: Interval } | null;
  /** Escalations by the trigger that fired (`structural`, `confidence`, `judge`…). */
  byTrigger: Record<string, number>;
  /** Requests by the tier that answered (its name). */
  answeredBy: Record<string, number>;
  /** Tiers skipped for an open breaker. */
  skipped: number;
  /** Answers returned although a trigger doubted them (no later tier could answer). */
  degraded: number;
}

/**
 * Folds the cascade records in trace events (`model-response` events whose response carries
 * `routing`) into escalation figures, with a Wilson interval on the rate for `checkTrigger`.
 *
 * @example
 * const stats = escalationStats(trace.events);
 * checkTrigger(threshold, { maxAgeMs: 30 * 86_400_000, production: stats });
 */
export function escalationStats(events: Iterable<TraceEvent>): EscalationStats {
  let requests = 0;
  let escalated = 0;
  let skipped = 0;
  let degraded = 0;
  const byTrigger: Record<string, number> = {};
  const answeredBy: Record<string, number> = {};
  for (const event of events) {
    if (event.type !== 'model-response') continue;
    const record = cascadeRecordOf(event.response);
    if (!record) continue;
    requests++;
    if (record.degraded) degraded++;
    answeredBy[record.answeredBy.name] = (answeredBy[record.answeredBy.name] ?? 0) + 1;
    let up = false;
    for (const attempt of record.attempts) {
      if (attempt.kind === 'skipped') skipped++;
      if (attempt.kind !== 'escalated') continue;
      up = true;
      byTrigger[attempt.trigger] = (byTrigger[attempt.trigger] ?? 0) + 1;
    }
    if (up) escalated++;
  }
  return {
    requests,
    escalated,
    escalationRate:
      requests > 0 ? { estimate: escalated / requests, interval: wilsonInterval(escalated, requests) } : null,
    byTrigger,
    answeredBy,
    skipped,
    degraded,
  };
}
