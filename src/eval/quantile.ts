import { ConfigurationError } from '../errors/reins-error.js';

/**
 * The p-quantile of values already sorted ascending, by linear interpolation between order
 * statistics (Hyndman & Fan type 7, the default of R, NumPy and spreadsheets): position
 * `h = (n − 1)·p`, then interpolate between the values at `⌊h⌋` and `⌈h⌉`. `NaN` for no values.
 *
 * @example
 * quantileOfSorted([1, 2, 3, 4], 0.5); // 2.5
 */
export function quantileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 1)) throw new ConfigurationError('p', `must be in [0, 1], got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * p;
  const below = Math.floor(h);
  const low = sorted[below] as number;
  if (below === n - 1) return low;
  const high = sorted[below + 1] as number;
  return low + (h - below) * (high - low);
}
