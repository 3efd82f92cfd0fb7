import { ConfigurationError } from '../errors/reins-error.js';
import type { Distribution } from './eval-types.js';
import { quantileOfSorted } from './quantile.js';

/**
 * Summarizes values by their tail (p50, p90, p99, max) and mean. Percentiles interpolate linearly
 * between order statistics (type 7, see {@link quantileOfSorted}), so p99 of fewer than 100 values
 * lies between the two largest. No values give zeros with `n: 0`. A value that is not a finite number
 * is a programmer error and throws a `ConfigurationError`.
 *
 * @example
 * distribution([1, 2, 3, 4, 100]); // { n: 5, p50: 3, p90: 61.6, p99: 96.16, max: 100, mean: 22 }
 */
export function distribution(values: readonly number[]): Distribution {
  const n = values.length;
  if (n === 0) return { n: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = Float64Array.from(values);
  // Indexed loops: a report runs this a few times per eval, mostly before the JIT has looked at it.
  for (let index = 0; index < n; index++) {
    const value = sorted[index] as number;
    if (!Number.isFinite(value))
      throw new ConfigurationError(`values[${index}]`, `must be a finite number, got ${value}`);
  }
  sorted.sort();
  let sum = 0;
  for (let index = 0; index < n; index++) sum += sorted[index] as number;
  return {
    n,
    p50: quantileOfSorted(sorted, 0.5),
    p90: quantileOfSorted(sorted, 0.9),
    p99: quantileOfSorted(sorted, 0.99),
    max: sorted[n - 1] as number,
    mean: sum / n,
  };
}
