import type { Estimate } from '../estimate.js';
import { type MonteCarloOptions, monteCarloSettings } from '../monte-carlo.js';
import { amountParam, type ParamSpec, resolveParams } from '../params.js';
import { type SimRandom, simRandom } from '../random.js';

/** One bucket of call durations: with probability `weight`, uniform on [low, high] seconds. */
export interface DurationBucket {
  weight: number;
  low: number;
  high: number;
}

/**
 * A timeout is a bet (the timeout post in the cross-posts). A call that finishes within T costs
 * `idleRate` per second waited; a call cut off at T costs T seconds of idle plus
 * `callCost × retryMult` for the work thrown away and redone.
 */
export interface TimeoutParams {
  timeouts: number[];
  /** USD per second a worker burns waiting. */
  idleRate: number;
  /** USD already spent on a call when it is cut off. */
  callCost: number;
  /** A retry is not a clean redo: it costs this multiple of the call. */
  retryMult: number;
  /** The call-duration distribution; the post's: 85 % 1–6 s, 10 % 6–30 s, 5 % hung 120–300 s. */
  durations: DurationBucket[];
}

export const timeoutDefaults: TimeoutParams = {
  timeouts: [5, 10, 15, 20, 30, 45, 60],
  idleRate: 0.002,
  callCost: 0.1,
  retryMult: 1.2,
  durations: [
    { weight: 0.85, low: 1, high: 6 },
    { weight: 0.1, low: 6, high: 30 },
    { weight: 0.05, low: 120, high: 300 },
  ],
};

function parseDurations(text: string): unknown {
  return text.split(',').map((part) => {
    const match = /^\s*([\d.eE+-]+)\s*:\s*([\d.eE+-]+)\s*-\s*([\d.eE+-]+)\s*$/.exec(part);
    if (!match) return { weight: Number.NaN, low: Number.NaN, high: Number.NaN };
    return { weight: Number(match[1]), low: Number(match[2]), high: Number(match[3]) };
  });
}

function durationsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'no buckets';
  let total = 0;
  for (const bucket of value as DurationBucket[]) {
    const { weight, low, high } = bucket ?? {};
    if (![weight, low, high].every((x) => typeof x === 'number' && Number.isFinite(x)))
      return 'unreadable bucket';
    if (weight < 0 || low < 0 || high < low) return `bad bucket ${weight}:${low}-${high}`;
    total += weight;
  }
  return Math.abs(total - 1) > 1e-9 ? `weights sum to ${total}, not 1` : undefined;
}

export const timeoutParamSpecs: readonly ParamSpec[] = [
  {
    key: 'timeouts',
    flag: '--timeouts',
    kind: 'numbers',
    min: 0,
    minExclusive: true,
    description: 'timeouts to price, seconds',
  },
  amountParam('idleRate', 'USD per second a waiting worker burns', 0.01, 0.0005),
  amountParam('callCost', 'USD spent on a call when it is cut off', 1, 0.01),
  {
    key: 'retryMult',
    flag: '--retry-mult',
    kind: 'number',
    min: 0,
    description: 'a retry costs this multiple of the call',
    slider: { min: 1, max: 3, step: 0.05 },
  },
  {
    key: 'durations',
    flag: '--durations',
    kind: 'custom',
    description: 'call-duration mixture, weight:low-high seconds, comma separated',
    custom: {
      parse: parseDurations,
      problem: durationsProblem,
      format: (value) =>
        (value as DurationBucket[])
          .map((bucket) => `${bucket.weight}:${bucket.low}-${bucket.high}`)
          .join(','),
      form: 'weight:low-high buckets (e.g. 0.85:1-6,0.1:6-30,0.05:120-300) whose weights sum to 1',
    },
  },
];

function checked(given?: Partial<TimeoutParams>): TimeoutParams {
  return resolveParams(timeoutParamSpecs, timeoutDefaults, given);
}

/** P(duration > T) and E[min(duration, T)] for the mixture, in closed form. */
function exactCost(params: TimeoutParams, timeoutSeconds: number): number {
  let cutOff = 0;
  let waited = 0;
  for (const { weight, low, high } of params.durations) {
    const t = timeoutSeconds;
    if (t <= low) {
      cutOff += weight;
      waited += weight * t;
    } else if (t >= high) {
      waited += (weight * (low + high)) / 2;
    } else {
      const done = (t - low) / (high - low);
      cutOff += weight * (1 - done);
      waited += weight * (done * ((low + t) / 2) + (1 - done) * t);
    }
  }
  return params.idleRate * waited + cutOff * params.callCost * params.retryMult;
}

export interface TimeoutExact {
  curve: { timeoutSeconds: number; exactCostUsd: number }[];
  /** The cheapest of the timeouts asked about. */
  optimum: { timeoutSeconds: number; exactCostUsd: number };
  /** The cheapest timeout anywhere between the smallest and largest asked about. */
  continuousOptimum: { timeoutSeconds: number; exactCostUsd: number };
}

/**
 * @example
 * timeoutExact().optimum; // { timeoutSeconds: 30, exactCostUsd: 0.01855 }
 */
export function timeoutExact(given?: Partial<TimeoutParams>): TimeoutExact {
  const params = checked(given);
  const curve = params.timeouts.map((timeoutSeconds) => ({
    timeoutSeconds,
    exactCostUsd: exactCost(params, timeoutSeconds),
  }));
  const cheapest = <T extends { exactCostUsd: number }>(points: T[]) =>
    points.reduce((best, point) => (point.exactCostUsd < best.exactCostUsd ? point : best));
  // Between bucket edges the idle term grows with the share still running while the cut-off term
  // falls linearly, so cost is concave there: its minimum on a range is at an edge or an end.
  const low = Math.min(...params.timeouts);
  const high = Math.max(...params.timeouts);
  const candidates = [low, high];
  for (const bucket of params.durations) {
    for (const edge of [bucket.low, bucket.high]) if (edge >= low && edge <= high) candidates.push(edge);
  }
  const continuous = cheapest(
    candidates.map((timeoutSeconds) => ({ timeoutSeconds, exactCostUsd: exactCost(params, timeoutSeconds) })),
  );
  return { curve, optimum: cheapest(curve), continuousOptimum: continuous };
}

/** Exact cost for any timeout, for plotting a smooth curve. */
export function timeoutCostAt(given: Partial<TimeoutParams> | undefined, timeoutSeconds: number): number {
  return exactCost(checked(given), timeoutSeconds);
}

export interface TimeoutMonteCarlo {
  curve: { timeoutSeconds: number; monteCarloCostUsd: number; ci95: Estimate['ci95'] }[];
  trials: number;
  seed: number;
}

/**
 * The post's simulation: for each timeout, `trials` calls drawn from the same seed (common random
 * numbers, as the post does, so the curve's shape is not noise). 20,000 per timeout by default.
 */
export function timeoutMonteCarlo(
  given?: Partial<TimeoutParams>,
  options?: MonteCarloOptions,
): TimeoutMonteCarlo {
  const params = checked(given);
  const perTimeout = monteCarloSettings(options, 20_000);
  const total = perTimeout.trials * params.timeouts.length;
  const report = options?.onProgress;
  // Common random numbers, as the post does by reseeding per timeout: one set of durations, every
  // timeout priced against it, so the curve's shape is not sampling noise.
  const cumulative = params.durations.reduce<number[]>((sums, bucket) => {
    sums.push((sums.at(-1) ?? 0) + bucket.weight);
    return sums;
  }, []);
  const durations = drawDurations(
    simRandom(perTimeout.seed),
    perTimeout.trials,
    Float64Array.from(cumulative),
    Float64Array.from(params.durations, (bucket) => bucket.low),
    Float64Array.from(params.durations, (bucket) => bucket.high - bucket.low),
    report ? (done) => report(done, total) : undefined,
  );
  const retryCost = params.callCost * params.retryMult;
  const curve = params.timeouts.map((timeoutSeconds) => {
    const sums = new Float64Array(3);
    sumByTimeout(durations, timeoutSeconds, sums);
    const [finishedSum, finishedSquares, cutOff] = sums as unknown as [number, number, number];
    const n = durations.length;
    const cutOffCost = params.idleRate * timeoutSeconds + retryCost;
    const sum = params.idleRate * finishedSum + cutOff * cutOffCost;
    const sumSquares = params.idleRate * params.idleRate * finishedSquares + cutOff * cutOffCost * cutOffCost;
    const mean = sum / n;
    const variance = n > 1 ? Math.max(0, (sumSquares - sum * mean) / (n - 1)) : 0;
    const half = 1.959963984540054 * Math.sqrt(variance / n);
    return { timeoutSeconds, monteCarloCostUsd: mean, ci95: [mean - half, mean + half] as const };
  });
  report?.(total, total);
  return { curve, trials: perTimeout.trials, seed: perTimeout.seed };
}

// The loops live in small top-level functions so they are optimized once and stay optimized.

function drawDurations(
  random: SimRandom,
  trials: number,
  cumulative: Float64Array,
  lows: Float64Array,
  spans: Float64Array,
  report: ((done: number) => void) | undefined,
): Float64Array {
  const durations = new Float64Array(trials);
  const last = cumulative.length - 1;
  for (let trial = 0; trial < trials; trial++) {
    if (report && (trial & 4095) === 0) report(trial);
    const r = random.uniform();
    let bucket = 0;
    while (bucket < last && r >= (cumulative[bucket] as number)) bucket++;
    durations[trial] = (lows[bucket] as number) + (spans[bucket] as number) * random.uniform();
  }
  return durations;
}

/** Sum and sum of squares of the durations within the timeout, and the count cut off. */
function sumByTimeout(durations: Float64Array, timeoutSeconds: number, out: Float64Array): void {
  let finishedSum = 0;
  let finishedSquares = 0;
  let cutOff = 0;
  for (let i = 0; i < durations.length; i++) {
    const d = durations[i] as number;
    if (d <= timeoutSeconds) {
      finishedSum += d;
      finishedSquares += d * d;
    } else cutOff += 1;
  }
  out[0] = finishedSum;
  out[1] = finishedSquares;
  out[2] = cutOff;
}
