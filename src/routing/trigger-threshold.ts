import type { Interval } from '../eval/eval-types.js';

/**
 * A threshold with its provenance: the labeled set it was fitted on and when. A scored trigger
 * escalates an answer whose score is below `value`. `calibrateTrigger` makes one;
 * `checkTrigger` reports one that is too old or whose production escalation rate left its band.
 */
export interface TriggerThreshold {
  /** Escalate when the score is below this. */
  value: number;
  /** The labeled samples it was fitted on. */
  fittedOn: {
    size: number;
    /** A stable hash of the samples' ids and labels: two calibrations on the same set share it. */
    fingerprint: string;
    /** The sample ids, when the set is small enough to keep (≤ 1,000). */
    ids?: readonly string[];
  };
  /** When it was fitted (epoch ms, from the calibration's clock). */
  fittedAtMs: number;
  /** The share of requests it escalated on the labeled set, with a 95 % Wilson interval. */
  escalationRate: { estimate: number; interval: Interval };
  /** The misroute rate it was fitted to meet, if it was given one. */
  targetMisrouteRate?: number;
  /** The accuracy loss against all-strong it was fitted to meet, if it was given one. */
  targetAccuracyLoss?: number;
}

/** The number a threshold compares with, whether a bare number (uncalibrated) or a fitted one. */
export function thresholdValue(threshold: number | TriggerThreshold): number {
  return typeof threshold === 'number' ? threshold : threshold.value;
}
