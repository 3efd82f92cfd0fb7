import { ConfigurationError } from '../errors/reins-error.js';
import { requireCount } from './require-count.js';

function checkTrials(n: number, c: number, k: number): void {
  requireCount('n', n);
  requireCount('c', c);
  requireCount('k', k, 1);
  if (c > n) throw new ConfigurationError('c', `passes (${c}) cannot exceed trials (${n})`);
}

/**
 * Unbiased pass@k (Chen et al., 2021): the chance that at least one of k trials drawn without
 * replacement from the n run passes, given c of them passed. `1 − C(n−c, k)/C(n, k)`, computed as
 * `1 − ∏_{i=n−c+1..n} (1 − k/i)` so that no binomial coefficient overflows.
 *
 * The plug-in `1 − (1 − c/n)^k` is biased; this is not. Returns `null` when n < k (fewer trials than
 * k: the estimate does not exist). Throws a `ConfigurationError` for counts that are negative, not
 * whole, k < 1 or c > n.
 *
 * @example
 * passAtK(5, 2, 2); // 0.7
 * passAtK(1, 1, 2); // null: one trial cannot say anything about two
 */
export function passAtK(n: number, c: number, k: number): number | null {
  checkTrials(n, c, k);
  if (n < k) return null;
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/**
 * Unbiased pass^k (τ-bench): the chance that every one of k trials drawn without replacement from
 * the n run passes, given c passed. `C(c, k)/C(n, k)`, computed as `∏_{j=0..k−1} (c−j)/(n−j)`.
 *
 * The plug-in `(c/n)^k` overstates it: it samples with replacement, so one lucky pass counts k times.
 * Returns `null` when n < k; throws a `ConfigurationError` for invalid counts, as {@link passAtK}.
 *
 * @example
 * passHatK(5, 2, 2); // 0.1
 * passHatK(8, 6, 4); // 0.2142857…
 */
export function passHatK(n: number, c: number, k: number): number | null {
  checkTrials(n, c, k);
  if (n < k) return null;
  if (c < k) return 0;
  let allPass = 1;
  for (let j = 0; j < k; j++) allPass *= (c - j) / (n - j);
  return allPass;
}

/**
 * The mean of per-case estimates, as suites report pass@k and pass^k: each case counts once,
 * however many trials it ran. Cases whose estimate is `null` (fewer trials than k) are left out;
 * `null` when no case has an estimate.
 *
 * @example
 * meanOverCases([passHatK(5, 2, 2), passHatK(8, 6, 4), passHatK(1, 1, 2)]); // (0.1 + 0.2142857) / 2
 */
export function meanOverCases(estimates: readonly (number | null)[]): number | null {
  let sum = 0;
  let count = 0;
  for (const estimate of estimates) {
    if (estimate === null) continue;
    sum += estimate;
    count++;
  }
  return count === 0 ? null : sum / count;
}
