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
  const resamples = options.resamples ?? 1000;
  const tail = (1 - (options.level ?? 0.95)) / 2;
  // Flat typed arrays, one slot per (case, pass count): the loop below runs resamples × cases times.
  const m = ran.length;
  const offsets = new Int32Array(m + 1);
  for (let i = 0; i < m; i++) offsets[i + 1] = (offsets[i] as number) + (ran[i] as CaseTally).n + 1;
  const cdf = new Float64Array(offsets[m] as number);
  const atK = new Float64Array(offsets[m] as number);
  const hatK = new Float64Array(offsets[m] as number);
  const sizes = new Int32Array(m);
  const estimable = new Uint8Array(m);
  for (let i = 0; i < m; i++) {
    const one = ran[i] as CaseTally;
    const at = offsets[i] as number;
    sizes[i] = one.n;
    estimable[i] = one.n >= k ? 1 : 0;
    cdf.set(binomialCdf(one.n, one.passes / one.n), at);
    if (one.n >= k)
      for (let c = 0; c <= one.n; c++) {
        atK[at + c] = passAtK(one.n, c, k) as number;
        hatK[at + c] = passHatK(one.n, c, k) as number;
      }
  }
  // Where the search for a draw u starts: per case, the smallest pass count whose cumulative
  // probability passes each of `buckets` evenly spaced points, so a draw takes a step or two instead
  // of a scan from 0 (which mispredicts its branch on every random u).
  const buckets = 64;
  const starts = new Int32Array(m * buckets);
  for (let i = 0; i < m; i++) {
    const from = offsets[i] as number;
    const n = sizes[i] as number;
    let c = 0;
    for (let b = 0; b < buckets; b++) {
      while (c < n && (cdf[from + c] as number) <= b / buckets) c++;
      starts[i * buckets + b] = c;
    }
  }
  const anyEstimable = estimable.includes(1);
  const rates = new Float64Array(resamples);
  const atKs = new Float64Array(resamples);
  const hatKs = new Float64Array(resamples);
  let estimableResamples = 0;
  // mulberry32 inline, seeded from the caller's source: the same draws for the same `random`,
  // without a call through it for each of the resamples × cases × 2 draws.
  let state = Math.floor(random() * 4294967296) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let r = 0; r < resamples; r++) {
    let passes = 0;
    let trials = 0;
    let at = 0;
    let hat = 0;
    let counted = 0;
    for (let i = 0; i < m; i++) {
      const pick = Math.floor(next() * m);
      const from = offsets[pick] as number;
      const n = sizes[pick] as number;
      // The first pass count whose cumulative probability passes u: a binomial draw.
      const u = next();
      let c = starts[pick * buckets + Math.floor(u * buckets)] as number;
      while (c < n && (cdf[from + c] as number) <= u) c++;
      passes += c;
      trials += n;
      if (estimable[pick] === 1) {
        at += atK[from + c] as number;
        hat += hatK[from + c] as number;
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
