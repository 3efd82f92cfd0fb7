import { ConfigurationError } from '../errors/reins-error.js';
import type { Interval } from '../eval/eval-types.js';
import { wilsonInterval } from '../eval/wilson-interval.js';
import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/clock.js';
import type { TriggerThreshold } from './trigger-threshold.js';

export interface CheckTriggerOptions {
  /** A calibration older than this is stale (post-06: re-validate on a calendar). */
  maxAgeMs: number;
  /**
   * Production figures: requests a cascade answered and how many it escalated (from
   * `escalationStats` of the traces). Without them only the age is checked.
   */
  production?: { requests: number; escalated: number };
  /** @default systemClock */
  clock?: Clock;
}

/** Something wrong with a calibration in production. */
export type TriggerFinding =
  | { kind: 'stale'; ageMs: number; maxAgeMs: number; fittedAtMs: number }
  | {
      /**
       * The production escalation rate's 95 % interval does not overlap the calibrated one: the
       * model, the prompt or the traffic moved, and the threshold no longer means what it did.
       */
      kind: 'escalation_drift';
      production: { estimate: number; interval: Interval; requests: number };
      calibrated: { estimate: number; interval: Interval };
    };

/** `ok` when nothing was found; otherwise every finding. */
export type TriggerCheck =
  | { kind: 'ok'; ageMs: number }
  | { kind: 'findings'; ageMs: number; findings: TriggerFinding[] };

/**
 * Reports a calibrated threshold that is too old, or whose production escalation rate has left
 * the band it was calibrated at. Intervals on both sides, so a small day's noise is not drift.
 *
 * @example
 * const check = checkTrigger(threshold, { maxAgeMs: 30 * 86_400_000, production: { requests: 5000, escalated: 2400 } });
 * if (check.kind === 'findings') for (const finding of check.findings) console.warn(finding.kind);
 */
export function checkTrigger(threshold: TriggerThreshold, options: CheckTriggerOptions): TriggerCheck {
  const { maxAgeMs, production } = options;
  if (!(maxAgeMs >= 0)) throw new ConfigurationError('maxAgeMs', `must be ≥ 0, got ${String(maxAgeMs)}`);
  const ageMs = (options.clock ?? systemClock).now() - threshold.fittedAtMs;
  const findings: TriggerFinding[] = [];
  if (ageMs > maxAgeMs) findings.push({ kind: 'stale', ageMs, maxAgeMs, fittedAtMs: threshold.fittedAtMs });
  if (production && production.requests > 0) {
    const interval = wilsonInterval(production.escalated, production.requests);
    const calibrated = threshold.escalationRate.interval;
    if (interval[1] < calibrated[0] || interval[0] > calibrated[1])
      findings.push({
        kind: 'escalation_drift',
        production: {
          estimate: production.escalated / production.requests,
          interval,
          requests: production.requests,
        },
        calibrated: threshold.escalationRate,
      });
  }
  return findings.length > 0 ? { kind: 'findings', ageMs, findings } : { kind: 'ok', ageMs };
}
