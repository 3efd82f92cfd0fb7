/** A 95 % confidence interval, `[low, high]`. */
export type Interval = readonly [low: number, high: number];

/** A Monte Carlo estimate with its 95 % confidence interval. */
export interface Estimate {
  value: number;
  ci95: Interval;
}

const Z95 = 1.959963984540054;

/**
 * Accumulates a sample's sum and sum of squares (Welford, so a million draws of dollars stay
 * exact to the last printed digit) and reports the mean with a normal-theory 95 % interval.
 */
export class MeanAccumulator {
  private n = 0;
  private mean = 0;
  private m2 = 0;

  add(x: number): void {
    this.n += 1;
    const delta = x - this.mean;
    this.mean += delta / this.n;
    this.m2 += delta * (x - this.mean);
  }

  get count(): number {
    return this.n;
  }

  /** The mean and its interval; a sample of one has an interval of zero width at its value. */
  estimate(): Estimate {
    if (this.n === 0) return { value: Number.NaN, ci95: [Number.NaN, Number.NaN] };
    const variance = this.n > 1 ? this.m2 / (this.n - 1) : 0;
    const half = Z95 * Math.sqrt(variance / this.n);
    return { value: this.mean, ci95: [this.mean - half, this.mean + half] };
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

/**
 * The q-quantile of an ascending sample by nearest rank, with a distribution-free 95 % interval
 * from the order statistics whose ranks are `nq ± z·√(nq(1−q))`.
 */
export function quantileEstimate(sorted: Float64Array, q: number): Estimate {
  const n = sorted.length;
  const at = (rank: number) => sorted[Math.min(n - 1, Math.max(0, rank))] as number;
  const spread = Z95 * Math.sqrt(n * q * (1 - q));
  return {
    value: at(Math.ceil(q * n) - 1),
    ci95: [at(Math.floor(n * q - spread) - 1), at(Math.ceil(n * q + spread) - 1)],
  };
}

/** True when the interval contains `x`. */
export function brackets(interval: Interval, x: number): boolean {
  return interval[0] <= x && x <= interval[1];
}

/** Scales an estimate (dollars per run to dollars per thousand runs, cost to a multiplier). */
export function scaleEstimate(estimate: Estimate, factor: number): Estimate {
  return { value: estimate.value * factor, ci95: [estimate.ci95[0] * factor, estimate.ci95[1] * factor] };
}
