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
 * given `random`. From `normalFromCases` cases on (30), the resampled mean of that many independent
 * draws is close to normal, so the interval comes from the bootstrap distribution's exact mean and
 * variance (computed from the cases, no resampling), clamped to [0, 1].
 */
export function caseBootstrap(
  cases: readonly CaseTally[],
  k: number,
  random: RandomSource,
  options: { resamples?: number; level?: number; normalFromCases?: number } = {},
): CaseBootstrapIntervals {
  const ran = cases.filter((one) => one.n > 0);
  if (ran.length === 0) return { passRate: null, passAtK: null, passHatK: null };
  if (ran.length >= (options.normalFromCases ?? 30)) return bootstrapMoments(ran, k, options.level ?? 0.95);
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

/** The standard normal quantile for a two-sided level (Acklam's rational approximation, |error| < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) /
      ((((d0 * q + d1) * q + d2) * q + d3) * q + 1)
    );
  }
  if (p > 1 - 0.02425) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) /
    (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1)
  );
}

/** The binomial(n, p) probabilities over 0..n, from the cumulative table. */
function binomialPmf(n: number, p: number): Float64Array {
  const cdf = binomialCdf(n, p);
  const pmf = new Float64Array(n + 1);
  for (let j = 0; j <= n; j++) pmf[j] = (cdf[j] as number) - (j === 0 ? 0 : (cdf[j - 1] as number));
  return pmf;
}

/** A case's pass@k and pass^k, first and second moments over its binomial pass count. */
interface CaseMoments {
  a1: number;
  a2: number;
  h1: number;
  h2: number;
}

function caseMoments(n: number, p: number, k: number): CaseMoments {
  const pmf = binomialPmf(n, p);
  let a1 = 0;
  let a2 = 0;
  let h1 = 0;
  let h2 = 0;
  for (let c = 0; c <= n; c++) {
    const w = pmf[c] as number;
    if (w === 0) continue;
    const atK = passAtK(n, c, k) as number;
    const hatK = passHatK(n, c, k) as number;
    a1 += w * atK;
    a2 += w * atK * atK;
    h1 += w * hatK;
    h2 += w * hatK * hatK;
  }
  return { a1, a2, h1, h2 };
}

/**
 * The two-level bootstrap's intervals from its exact moments: a resampled figure is the mean of m
 * independent draws, each a uniformly chosen case at a binomial pass count, so its mean and variance
 * follow from each case's first two moments; the pass rate (Σ passes ÷ Σ trials) by the delta method.
 */
function bootstrapMoments(cases: readonly CaseTally[], k: number, level: number): CaseBootstrapIntervals {
  const z = normalQuantile(1 - (1 - level) / 2);
  const m = cases.length;
  let ex = 0;
  let ex2 = 0;
  let ey = 0;
  let ey2 = 0;
  let exy = 0;
  const at = { sum: 0, sum2: 0, count: 0 };
  const hat = { sum: 0, sum2: 0, count: 0 };
  // A case's moments depend only on its (n, passes), and most cases share a few of those (n is the
  // trial count): each pair is worked out once, not once per case.
  const known = new Map<string, CaseMoments>();
  for (const one of cases) {
    const p = one.passes / one.n;
    const mean = one.n * p;
    ex += mean;
    ex2 += one.n * p * (1 - p) + mean * mean;
    ey += one.n;
    ey2 += one.n * one.n;
    exy += one.n * mean;
    if (one.n < k) continue;
    const key = `${one.n}/${one.passes}`;
    let moments = known.get(key);
    if (!moments) {
      moments = caseMoments(one.n, p, k);
      known.set(key, moments);
    }
    at.sum += moments.a1;
    at.sum2 += moments.a2;
    at.count++;
    hat.sum += moments.h1;
    hat.sum2 += moments.h2;
    hat.count++;
  }
  ex /= m;
  ex2 /= m;
  ey /= m;
  ey2 /= m;
  exy /= m;
  const clamp = (low: number, high: number): Interval => [Math.max(0, low), Math.min(1, high)];
  const ratio = ex / ey;
  const residual = ex2 - 2 * ratio * exy + ratio * ratio * ey2 - (ex - ratio * ey) ** 2;
  const rateSd = Math.sqrt(Math.max(0, residual) / m) / ey;
  const ofMean = (moments: { sum: number; sum2: number; count: number }): Interval | null => {
    if (moments.count === 0) return null;
    const mean = moments.sum / moments.count;
    const variance = Math.max(0, moments.sum2 / moments.count - mean * mean);
    const sd = Math.sqrt(variance / moments.count);
    return clamp(mean - z * sd, mean + z * sd);
  };
  return {
    passRate: clamp(ratio - z * rateSd, ratio + z * rateSd),
    passAtK: ofMean(at),
    passHatK: ofMean(hat),
  };
}
