/** A 95 % confidence interval, `[low, high]`. */
export type Interval = readonly [low: number, high: number];

/** A Monte Carlo estimate with its 95 % confidence interval. */
export interface Estimate {
  value: number;
  ci95: Interval;
}

const Z95 = 1.959963984540054;

/**
 * Accumulates a sample and reports its mean with a normal-theory 95 % interval. Sums are kept
 * relative to the first value, so the variance does not cancel away when the spread is small
 * next to the mean (dollars per run), and `add` costs two additions and a multiply.
 */
export class MeanAccumulator {
  private n = 0;
  private shift = 0;
  private sum = 0;
  private sumSquares = 0;

  add(x: number): void {
    if (this.n === 0) this.shift = x;
    const d = x - this.shift;
    this.sum += d;
    this.sumSquares += d * d;
    this.n += 1;
  }

  get count(): number {
    return this.n;
  }

  /** The mean and its interval; a sample of one has an interval of zero width at its value. */
  estimate(): Estimate {
    const n = this.n;
    if (n === 0) return { value: Number.NaN, ci95: [Number.NaN, Number.NaN] };
    const mean = this.shift + this.sum / n;
    const variance = n > 1 ? Math.max(0, (this.sumSquares - (this.sum * this.sum) / n) / (n - 1)) : 0;
    const half = Z95 * Math.sqrt(variance / n);
    return { value: mean, ci95: [mean - half, mean + half] };
  }
}

/**
 * A proportion with its Wilson score interval: unlike `p ± z·√(p(1−p)/n)` it stays inside [0, 1]
 * and is honest when nothing (or everything) happened, which is common for give-up rates.
 */
export function proportionEstimate(successes: number, trials: number): Estimate {
  if (trials === 0) return { value: Number.NaN, ci95: [0, 1] };
  const p = successes / trials;
  const z2 = Z95 * Z95;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { value: p, ci95: [Math.max(0, centre - half), Math.min(1, centre + half)] };
}

function quantileRanks(n: number, q: number): [value: number, low: number, high: number] {
  const clamp = (rank: number) => Math.min(n - 1, Math.max(0, rank));
  const spread = Z95 * Math.sqrt(n * q * (1 - q));
  return [
    clamp(Math.ceil(q * n) - 1),
    clamp(Math.floor(n * q - spread) - 1),
    clamp(Math.ceil(n * q + spread) - 1),
  ];
}

/** Moves the k-th smallest of `a[left..right]` to index k (Hoare quickselect, median-of-three). */
function select(a: Float64Array, k: number, left: number, right: number): void {
  let lo = left;
  let hi = right;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    const x = a[lo] as number;
    const y = a[mid] as number;
    const z = a[hi] as number;
    const pivot = x < y ? (y < z ? y : Math.max(x, z)) : x < z ? x : Math.max(y, z);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/**
 * Quantiles of a sample by nearest rank, each with a distribution-free 95 % interval from the
 * order statistics whose ranks are `nq ± z·√(nq(1−q))`. Finds only the order statistics it needs
 * (selection, O(n) each on a shrinking range) instead of sorting; reorders `sample` in place.
 */
export function quantileEstimates(sample: Float64Array, qs: readonly number[]): Estimate[] {
  const n = sample.length;
  const wanted = qs.map((q) => quantileRanks(n, q));
  const ranks = [...new Set(wanted.flat())].sort((a, b) => a - b);
  let left = 0;
  for (const rank of ranks) {
    select(sample, rank, left, n - 1);
    left = rank;
  }
  return wanted.map(([value, low, high]) => ({
    value: sample[value] as number,
    ci95: [sample[low] as number, sample[high] as number],
  }));
}

/** True when the interval contains `x`. */
export function brackets(interval: Interval, x: number): boolean {
  return interval[0] <= x && x <= interval[1];
}
