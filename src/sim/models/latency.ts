import { type Estimate, MeanAccumulator, quantileEstimates } from '../estimate.js';
import { type MonteCarloOptions, monteCarloSettings } from '../monte-carlo.js';
import { type ParamSpec, resolveParams } from '../params.js';
import { simRandom } from '../random.js';
import { tableExp } from '../table-exp.js';

/**
 * A run is a sum of step latencies (post-10, "Your agent's p99 is a different animal"): each step
 * is lognormal(mu, sigma) milliseconds; one step may have a fatter tail; steps in a parallel
 * group cost the slowest of the group (a sum becomes a max).
 */
export interface LatencyParams {
  steps: number;
  /** Lognormal mu of one step, ln ms (6.0 → median 403 ms). */
  mu: number;
  sigma: number;
  /** 0-based index of a step with a heavier tail (the post's `i == 3`). */
  fatStep?: number;
  fatSigma?: number;
  /** Sizes of consecutive groups that run concurrently; must sum to `steps`. */
  parallel?: number[];
}

export const latencyDefaults: LatencyParams = { steps: 8, mu: 6, sigma: 0.6 };

export const latencyParamSpecs: readonly ParamSpec[] = [
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 10_000,
    description: 'steps per run',
    slider: { min: 1, max: 30, step: 1 },
  },
  {
    key: 'mu',
    flag: '--mu',
    kind: 'number',
    min: -20,
    max: 20,
    description: 'lognormal mu of a step (ln ms)',
    slider: { min: 4, max: 8, step: 0.05 },
  },
  {
    key: 'sigma',
    flag: '--sigma',
    kind: 'number',
    min: 0,
    max: 5,
    description: 'lognormal sigma (tail heaviness)',
    slider: { min: 0, max: 2, step: 0.05 },
  },
  {
    key: 'fatStep',
    flag: '--fat-step',
    kind: 'integer',
    min: 0,
    optional: true,
    description: '0-based index of the step with a fatter tail',
  },
  {
    key: 'fatSigma',
    flag: '--fat-sigma',
    kind: 'number',
    min: 0,
    max: 5,
    optional: true,
    description: 'sigma of the fat step',
    slider: { min: 0, max: 2.5, step: 0.05 },
  },
  {
    key: 'parallel',
    flag: '--parallel',
    kind: 'integers',
    min: 1,
    optional: true,
    description: 'sizes of concurrent step groups, summing to --steps (e.g. 1,3,1,1,1,1)',
  },
];

const crossCheck = (params: LatencyParams) => {
  if (params.fatStep !== undefined && params.fatStep >= params.steps) {
    return { key: 'fatStep', problem: `must be < --steps (${params.steps}), got ${params.fatStep}` };
  }
  if ((params.fatStep === undefined) !== (params.fatSigma === undefined)) {
    return {
      key: params.fatStep === undefined ? 'fatStep' : 'fatSigma',
      problem: 'is missing: --fat-step and --fat-sigma go together, give both or neither',
    };
  }
  const grouped = params.parallel?.reduce((sum, size) => sum + size, 0);
  if (grouped !== undefined && grouped !== params.steps) {
    return { key: 'parallel', problem: `group sizes must sum to --steps (${params.steps}), got ${grouped}` };
  }
  return undefined;
};

function checked(given?: Partial<LatencyParams>): LatencyParams {
  return resolveParams(latencyParamSpecs, latencyDefaults, given, crossCheck);
}

export interface LatencyStats<T> {
  mean: T;
  p50: T;
  p95: T;
  p99: T;
}

/** The standard normal quantile (Acklam's rational approximation, relative error < 1.2·10⁻⁹). */
export function normalQuantile(q: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.928510446969, 138.357751867269, -30.66479806614716,
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
  const poly = (k: number[], x: number) => k.reduce((sum, coefficient) => sum * x + coefficient, 0);
  if (q < 0.02425) {
    const x = Math.sqrt(-2 * Math.log(q));
    return poly(c, x) / (poly(d, x) * x + 1);
  }
  if (q > 1 - 0.02425) return -normalQuantile(1 - q);
  const x = q - 0.5;
  const r = x * x;
  return (poly(a, r) * x) / (poly(b, r) * r + 1);
}

export interface LatencyExact {
  /** A typical (not fat) step, in closed form. */
  step: LatencyStats<number>;
  /** Mean run latency when every step is serial: Σ exp(mu + sigma_i²/2). No closed form in parallel. */
  runMean: number | undefined;
  /** Chance at least one of the steps lands in its own slowest 10 %: 1 − 0.9^steps. */
  atLeastOneSlowStep: number;
}

/**
 * @example
 * latencyExact().step.p50; // 403.4 ms
 */
export function latencyExact(given?: Partial<LatencyParams>): LatencyExact {
  const params = checked(given);
  const { mu, sigma, steps } = params;
  const quantile = (q: number) => Math.exp(mu + sigma * normalQuantile(q));
  const stepMean = (s: number) => Math.exp(mu + (s * s) / 2);
  let runMean = 0;
  for (let i = 0; i < steps; i++)
    runMean += stepMean(i === params.fatStep ? (params.fatSigma ?? sigma) : sigma);
  return {
    step: { mean: stepMean(sigma), p50: Math.exp(mu), p95: quantile(0.95), p99: quantile(0.99) },
    runMean: params.parallel?.some((size) => size > 1) ? undefined : runMean,
    atLeastOneSlowStep: 1 - 0.9 ** steps,
  };
}

export interface LatencyMonteCarlo {
  step: LatencyStats<Estimate>;
  run: LatencyStats<Estimate>;
  /** Run latencies binned for a chart: `counts[i]` runs fell in [start + i·width, start + (i+1)·width). */
  histogram: { startMs: number; widthMs: number; counts: number[]; overflow: number };
  trials: number;
  seed: number;
}

function summarize(sample: Float64Array): LatencyStats<Estimate> {
  const mean = new MeanAccumulator();
  for (let i = 0; i < sample.length; i++) mean.add(sample[i] as number);
  const [p50, p95, p99] = quantileEstimates(sample, [0.5, 0.95, 0.99]) as [Estimate, Estimate, Estimate];
  return { mean: mean.estimate(), p50, p95, p99 };
}

/**
 * The post's simulation: `trials` runs and, separately, `trials` single steps, 200,000 each by
 * default; percentiles by nearest rank with order-statistic intervals.
 */
export function latencyMonteCarlo(
  given?: Partial<LatencyParams>,
  options?: MonteCarloOptions,
): LatencyMonteCarlo {
  const params = checked(given);
  const { trials, seed, report, finish } = monteCarloSettings(options, 200_000);
  const random = simRandom(seed);
  const sigmas = Float64Array.from({ length: params.steps }, (_, i) =>
    i === params.fatStep ? (params.fatSigma ?? params.sigma) : params.sigma,
  );
  const { mu } = params;
  const runs = new Float64Array(trials);
  const steps = new Float64Array(trials);
  // Normals are drawn in blocks (the same stream, in the same order, as one call per step), then
  // exponentiated and summed: two tight loops run about twice as fast as one mixed loop.
  const stepCount = params.steps;
  const groups = params.parallel ?? [];
  const serial = groups.every((size) => size === 1);
  const chunk = Math.max(1, Math.floor(16_384 / stepCount));
  const block = new Float64Array(chunk * stepCount);
  for (let start = 0; start < trials; start += chunk) {
    if (report) report(start, trials);
    const count = Math.min(chunk, trials - start);
    const draws = count === chunk ? block : block.subarray(0, count * stepCount);
    random.fillNormal(draws);
    if (serial) sumSerial(draws, count, stepCount, mu, sigmas, runs, start);
    else sumGroups(draws, count, stepCount, mu, sigmas, groups, runs, start);
  }
  random.fillNormal(steps);
  for (let start = 0; start < trials; start += 16_384) {
    exponentiate(steps.subarray(start, Math.min(trials, start + 16_384)), params.mu, params.sigma);
  }
  finish();
  const step = summarize(steps);
  const run = summarize(runs);
  // Bins up to the 99.9th percentile; the rest is counted as overflow rather than stretching the axis.
  const top = (quantileEstimates(runs, [0.999])[0] as Estimate).value;
  const binCount = 60;
  const widthMs = top / binCount || 1;
  const counts = new Array<number>(binCount).fill(0);
  let overflow = 0;
  for (let i = 0; i < trials; i++) {
    const ms = runs[i] as number;
    const bin = Math.floor(ms / widthMs);
    if (bin < binCount) counts[bin] = (counts[bin] as number) + 1;
    else overflow += 1;
  }
  return { step, run, histogram: { startMs: 0, widthMs, counts, overflow }, trials, seed };
}

// Small functions for the hot loops: they are optimized after a few calls, where a loop inside
// the big function above would wait for on-stack replacement of the whole thing (slow when cold).

function sumSerial(
  draws: Float64Array,
  count: number,
  stepCount: number,
  mu: number,
  sigmas: Float64Array,
  runs: Float64Array,
  start: number,
): void {
  for (let j = 0; j < count; j++) {
    const offset = j * stepCount;
    let total = 0;
    for (let i = 0; i < stepCount; i++)
      total += tableExp(mu + (sigmas[i] as number) * (draws[offset + i] as number));
    runs[start + j] = total;
  }
}

function sumGroups(
  draws: Float64Array,
  count: number,
  stepCount: number,
  mu: number,
  sigmas: Float64Array,
  groups: readonly number[],
  runs: Float64Array,
  start: number,
): void {
  for (let j = 0; j < count; j++) {
    const offset = j * stepCount;
    let total = 0;
    let index = 0;
    for (const size of groups) {
      let slowest = 0;
      for (let g = 0; g < size; g++, index++) {
        const ms = tableExp(mu + (sigmas[index] as number) * (draws[offset + index] as number));
        if (ms > slowest) slowest = ms;
      }
      total += slowest;
    }
    runs[start + j] = total;
  }
}

function exponentiate(values: Float64Array, mu: number, sigma: number): void {
  for (let i = 0; i < values.length; i++) values[i] = tableExp(mu + sigma * (values[i] as number));
}
