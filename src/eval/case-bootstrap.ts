import type { RandomSource } from '../time/clock.js';
import type { Interval } from './eval-types.js';
import { passAtK, passHatK } from './pass-at-k.js';
import { quantileOfSorted } from './quantile.js';

/** One case's trials: how many ran and how many passed. */
export interface CaseTally {
  n: number;
  passes: number;
}

/** Intervals from {@link caseBootstrap}; null where there is nothing to estimate. */
export interface CaseBootstrapIntervals {
  passRate: Interval | null;
  passAtK: Interval | null;
  passHatK: Interval | null;
}

/** The cumulative binomial(n, p) distribution over 0..n, computed in log space (no underflow at large n). */
function binomialCdf(n: number, p: number): Float64Array {
  const cdf = new Float64Array(n + 1);
  if (p <= 0) cdf.fill(1);
  else if (p >= 1) cdf[n] = 1;
  else {
    const logP = Math.log(p);
    const logQ = Math.log(1 - p);
    let logPmf = n * logQ;
    let total = 0;
    for (let j = 0; j <= n; j++) {
      total += Math.exp(logPmf);
      cdf[j] = total;
      logPmf += Math.log(n - j) - Math.log(j + 1) + logP - logQ;
    }
    for (let j = 0; j <= n; j++) cdf[j] = (cdf[j] as number) / total;
  }
  return cdf;
}

/** The first j with cdf[j] > u: a draw from the distribution. */
function draw(cdf: Float64Array, u: number): number {
  let low = 0;
  let high = cdf.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((cdf[middle] as number) > u) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * A two-level percentile bootstrap for figures averaged over cases: each resample draws the cases
 * with replacement, then each drawn case's trials with replacement (its pass count from a binomial
 * at its observed rate), and recomputes the pass rate, the mean pass@k and the mean pass^k. Trials of
 * one case are correlated, so resampling trials alone (Wilson's interval) is too narrow when cases
 * differ; resampling cases alone gives a single point when there is one case. Deterministic for a
 * given `random`.
 */
export function caseBootstrap(
  cases: readonly CaseTally[],
  k: number,
  random: RandomSource,
  options: { resamples?: number; level?: number } = {},
): CaseBootstrapIntervals {
  const ran = cases.filter((one) => one.n > 0);
  if (ran.length === 0) return { passRate: null, passAtK: null, passHatK: null };
  const resamples = options.resamples ?? 2000;
  const tail = (1 - (options.level ?? 0.95)) / 2;
  const tables = ran.map((one) => {
    const atK = new Float64Array(one.n + 1);
    const hatK = new Float64Array(one.n + 1);
    const estimable = one.n >= k;
    for (let c = 0; c <= one.n; c++) {
      atK[c] = estimable ? (passAtK(one.n, c, k) as number) : Number.NaN;
      hatK[c] = estimable ? (passHatK(one.n, c, k) as number) : Number.NaN;
    }
    return { n: one.n, cdf: binomialCdf(one.n, one.passes / one.n), atK, hatK, estimable };
  });
  const anyEstimable = tables.some((table) => table.estimable);
  const rates = new Float64Array(resamples);
  const atKs = new Float64Array(resamples);
  const hatKs = new Float64Array(resamples);
  let estimableResamples = 0;
  for (let r = 0; r < resamples; r++) {
    let passes = 0;
    let trials = 0;
    let at = 0;
    let hat = 0;
    let counted = 0;
    for (let i = 0; i < tables.length; i++) {
      const table = tables[Math.floor(random() * tables.length)] as (typeof tables)[number];
      const c = draw(table.cdf, random());
      passes += c;
      trials += table.n;
      if (table.estimable) {
        at += table.atK[c] as number;
        hat += table.hatK[c] as number;
        counted++;
      }
    }
    rates[r] = passes / trials;
    if (counted > 0) {
      atKs[estimableResamples] = at / counted;
      hatKs[estimableResamples] = hat / counted;
      estimableResamples++;
    }
  }
  const interval = (values: Float64Array, length: number): Interval | null => {
    if (length === 0) return null;
    const sorted = values.subarray(0, length).sort();
    return [quantileOfSorted(sorted, tail), quantileOfSorted(sorted, 1 - tail)];
  };
  return {
    passRate: interval(rates, resamples),
    passAtK: anyEstimable ? interval(atKs, estimableResamples) : null,
    passHatK: anyEstimable ? interval(hatKs, estimableResamples) : null,
  };
}
