import { ConfigurationError } from '../errors/reins-error.js';
import type { RandomSource } from '../time/clock.js';
import { bootstrapInterval, mean } from './bootstrap-interval.js';
import type { Interval } from './eval-types.js';
import { wilsonInterval, z95 } from './wilson-interval.js';

/** Two versions run on the same cases, pass or fail: how they differ and whether it is noise. */
export interface PairedComparison {
  /** Cases run by both. */
  n: number;
  baselineRate: number;
  candidateRate: number;
  /** `candidateRate − baselineRate`. */
  difference: number;
  /** 95 % interval for the difference, by Newcombe's square-and-add method for paired data (method 10). */
  differenceCi95: Interval;
  /** The cases that decide the test: passed by one version only. */
  discordant: { baselineOnly: number; candidateOnly: number };
  /** Exact McNemar: two-sided binomial test of the discordant split against 50/50. 1 with none. */
  pValue: number;
  /** `pValue ≥ alpha`: the difference is what reruns of one version would show anyway. */
  withinNoise: boolean;
}

export interface ComparePairedOptions {
  /** The significance level. @default 0.05 */
  alpha?: number;
}

function checkPaired(baseline: readonly unknown[], candidate: readonly unknown[]): void {
  if (baseline.length !== candidate.length)
    throw new ConfigurationError(
      'candidate',
      `needs one result per baseline case (${baseline.length}), got ${candidate.length}`,
    );
}

/**
 * Two-sided exact binomial p-value for `smaller` of `total` coin flips: `2·P(X ≤ smaller)`, capped
 * at 1. Terms are summed relative to the largest and scaled once in log space, so thousands of
 * discordant pairs neither underflow nor lose the small ones.
 */
function exactMcNemar(smaller: number, total: number): number {
  if (total === 0) return 1;
  // log C(total, smaller) − total·log 2, the largest term of the lower tail.
  let logLargest = -total * Math.LN2;
  for (let j = 1; j <= smaller; j++) logLargest += Math.log((total - smaller + j) / j);
  let relative = 1;
  let ratio = 1;
  for (let i = smaller; i > 0; i--) {
    ratio *= i / (total - i + 1);
    relative += ratio;
  }
  return Math.min(1, 2 * relative * Math.exp(logLargest));
}

/**
 * Newcombe (1998) method 10 for the difference of paired proportions: Wilson intervals for each
 * rate, combined with the correlation φ of the paired outcomes (shrunk toward 0 as in the paper).
 */
function newcombePaired(
  both: number,
  candidateOnly: number,
  baselineOnly: number,
  neither: number,
): Interval {
  const n = both + candidateOnly + baselineOnly + neither;
  const candidatePasses = both + candidateOnly;
  const baselinePasses = both + baselineOnly;
  const p1 = candidatePasses / n;
  const p2 = baselinePasses / n;
  const [l1, u1] = wilsonInterval(candidatePasses, n, z95);
  const [l2, u2] = wilsonInterval(baselinePasses, n, z95);
  const margins = candidatePasses * (n - candidatePasses) * baselinePasses * (n - baselinePasses);
  const cross = both * neither - candidateOnly * baselineOnly;
  let phi = 0;
  if (margins > 0) {
    if (cross > n / 2) phi = (cross - n / 2) / Math.sqrt(margins);
    else if (cross < 0) phi = cross / Math.sqrt(margins);
  }
  const difference = p1 - p2;
  const below = Math.sqrt(Math.max(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2));
  const above = Math.sqrt(Math.max(0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2));
  return [Math.max(-1, difference - below), Math.min(1, difference + above)];
}

/**
 * Compares two versions on the same cases (baseline[i] and candidate[i] are one case): the change in
 * pass rate, its paired interval, and the exact McNemar test. Pairing matters: cases differ far more
 * than versions do, and only the cases one version passes and the other fails carry evidence.
 * With no cases, rates are 0, the interval [-1, 1] and the p-value 1.
 *
 * @example
 * const baseline = [true, false, false, true];
 * const candidate = [true, true, true, true];
 * comparePaired(baseline, candidate).withinNoise; // true: two discordant cases prove nothing
 */
export function comparePaired(
  baseline: readonly boolean[],
  candidate: readonly boolean[],
  options: ComparePairedOptions = {},
): PairedComparison {
  const { alpha = 0.05 } = options;
  if (!(alpha > 0 && alpha < 1)) throw new ConfigurationError('alpha', `must be in (0, 1), got ${alpha}`);
  checkPaired(baseline, candidate);
  let both = 0;
  let baselineOnly = 0;
  let candidateOnly = 0;
  let neither = 0;
  baseline.forEach((baselinePassed, i) => {
    const candidatePassed = candidate[i] === true;
    if (baselinePassed && candidatePassed) both++;
    else if (baselinePassed) baselineOnly++;
    else if (candidatePassed) candidateOnly++;
    else neither++;
  });
  const n = baseline.length;
  const pValue = exactMcNemar(Math.min(baselineOnly, candidateOnly), baselineOnly + candidateOnly);
  const baselineRate = n === 0 ? 0 : (both + baselineOnly) / n;
  const candidateRate = n === 0 ? 0 : (both + candidateOnly) / n;
  return {
    n,
    baselineRate,
    candidateRate,
    difference: candidateRate - baselineRate,
    differenceCi95: n === 0 ? [-1, 1] : newcombePaired(both, candidateOnly, baselineOnly, neither),
    discordant: { baselineOnly, candidateOnly },
    pValue,
    withinNoise: pValue >= alpha,
  };
}

/** How a paired numeric figure (cost, latency) moved between two versions. */
export interface PairedDelta {
  n: number;
  /** Mean of `candidate[i] − baseline[i]`. `NaN` with no pairs. */
  meanDifference: number;
  /** Percentile bootstrap 95 % interval of that mean, resampling cases; null with no pairs. */
  differenceCi95: Interval | null;
}

export interface PairedDeltaOptions {
  /** Where the resamples come from (see {@link bootstrapInterval}). */
  random: RandomSource;
  /** @default 2000 */
  resamples?: number;
}

/**
 * The mean paired difference of a numeric figure, candidate minus baseline, with a bootstrap
 * interval over cases: an interval that straddles 0 says the change is within noise.
 *
 * @example
 * import { seededRandom } from 'reins/testing';
 * pairedDelta([0.012, 0.02, 0.015], [0.01, 0.019, 0.011], { random: seededRandom(1) }).meanDifference;
 * // ≈ −0.00233 (USD per case)
 */
export function pairedDelta(
  baseline: readonly number[],
  candidate: readonly number[],
  options: PairedDeltaOptions,
): PairedDelta {
  checkPaired(baseline, candidate);
  const differences = baseline.map((value, i) => (candidate[i] as number) - value);
  const bootstrap = {
    random: options.random,
    ...(options.resamples !== undefined && { resamples: options.resamples }),
  };
  return {
    n: differences.length,
    meanDifference: mean(differences),
    differenceCi95: bootstrapInterval(differences, bootstrap),
  };
}
