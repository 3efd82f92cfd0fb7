import { ConfigurationError } from '../errors/reins-error.js';
import type { RandomSource } from '../time/clock.js';
import type { Interval } from './eval-types.js';
import { quantileOfSorted } from './quantile.js';
import { requireCount } from './require-count.js';

/** The arithmetic mean; `NaN` for no values. */
export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

export interface BootstrapOptions {
  /** What to estimate from a sample. @default mean */
  statistic?: (sample: readonly number[]) => number;
  /** How many resamples. @default 2000 */
  resamples?: number;
  /** Coverage of the interval, in (0, 1). @default 0.95 */
  level?: number;
  /**
   * Where the resamples come from. Required, with no default: an interval printed in a report must
   * come out the same when the report is rebuilt from the same results (pass `seededRandom(seed)`).
   */
  random: RandomSource;
}

/**
 * A percentile bootstrap interval: resample `values` with replacement `resamples` times, compute the
 * statistic on each, and take the `(1 − level)/2` and `(1 + level)/2` quantiles of those (type 7,
 * see {@link quantileOfSorted}). Deterministic for a given `random` sequence. Returns `null` for no
 * values: there is nothing to resample, and no interval is more honest than a made-up one.
 *
 * @example
 * import { seededRandom } from 'reins/testing';
 * bootstrapInterval([0.2, 0.5, 0.9, 1], { random: seededRandom(7) }); // a 95 % interval for the mean
 */
export function bootstrapInterval(values: readonly number[], options: BootstrapOptions): Interval | null {
  const { statistic = mean, resamples = 2000, level = 0.95, random } = options;
  requireCount('resamples', resamples, 1);
  if (!(level > 0 && level < 1)) throw new ConfigurationError('level', `must be in (0, 1), got ${level}`);
  const n = values.length;
  if (n === 0) return null;
  const estimates = new Float64Array(resamples);
  const sample: number[] = new Array<number>(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = values[Math.floor(random() * n)] as number;
    estimates[r] = statistic(sample);
  }
  estimates.sort();
  const tail = (1 - level) / 2;
  return [quantileOfSorted(estimates, tail), quantileOfSorted(estimates, 1 - tail)];
}
