import { ConfigurationError } from '../errors/reins-error.js';
import type { Interval } from './eval-types.js';
import { requireCount } from './require-count.js';

/** The normal quantile for a two-sided 95 % interval. */
export const z95 = 1.959964;

/**
 * The Wilson score interval for a proportion: unlike the normal (Wald) interval it stays inside
 * [0, 1] and does not collapse to a point at 0 or n successes, which is where small evals live.
 * With no trials nothing is known, so n = 0 gives [0, 1].
 *
 * @param z - the normal quantile of the level. @default 1.959964 (95 %)
 * @example
 * wilsonInterval(8, 10); // ≈ [0.4902, 0.9433]
 */
export function wilsonInterval(successes: number, n: number, z = z95): Interval {
  requireCount('n', n);
  requireCount('successes', successes);
  if (successes > n) throw new ConfigurationError('successes', `${successes} exceeds n (${n})`);
  if (!(z > 0)) throw new ConfigurationError('z', `must be positive, got ${z}`);
  if (n === 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const scale = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / scale;
  const half = (z / scale) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At the ends the bound is exact (0 passes: the low end is 0; all passes: the high end is 1); the
  // formula leaves rounding dust like 2.8e-17 there.
  return [successes === 0 ? 0 : Math.max(0, centre - half), successes === n ? 1 : Math.min(1, centre + half)];
}
