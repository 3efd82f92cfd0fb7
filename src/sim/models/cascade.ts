import { type Estimate, MeanAccumulator, proportionEstimate } from '../estimate.js';
import { type MonteCarloOptions, monteCarloSettings } from '../monte-carlo.js';
import { type ParamSpec, resolveParams } from '../params.js';
import { simRandom } from '../random.js';

/**
 * One bad step makes more (post-04, "How agent failures cascade"): a clean step faults with
 * probability p; once any fault has entered the context every later step faults with pc.
 */
export interface CascadeParams {
  steps: number;
  p: number;
  /** Per-step fault probability once the run is contaminated. */
  pc: number;
}

export const cascadeDefaults: CascadeParams = { steps: 8, p: 0.1, pc: 0.45 };

export const cascadeParamSpecs: readonly ParamSpec[] = [
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 1_000_000,
    description: 'steps per run',
    slider: { min: 1, max: 40, step: 1 },
  },
  {
    key: 'p',
    flag: '--p',
    kind: 'number',
    min: 0,
    max: 1,
    description: 'baseline per-step fault probability',
    slider: { min: 0, max: 0.5, step: 0.01 },
  },
  {
    key: 'pc',
    flag: '--pc',
    kind: 'number',
    min: 0,
    max: 1,
    description: 'per-step fault probability once contaminated',
    slider: { min: 0, max: 1, step: 0.01 },
  },
];

export interface CascadeExact {
  faultsPerRun: number;
  /** Share of runs with at least one fault: 1 − (1−p)^steps. */
  contaminatedRate: number;
  /** steps × p: what independence predicts. */
  independentFaultsPerRun: number;
  /** faultsPerRun ÷ independentFaultsPerRun (NaN when p = 0). */
  amplification: number;
}

/**
 * A two-state chain: step k is still clean with probability (1−p)^k, so
 * faults = Σ_k [(1−p)^k·p + (1 − (1−p)^k)·pc].
 *
 * @example
 * cascadeExact(); // 1.607 faults per run, 57 % contaminated, ×2.01
 */
export function cascadeExact(given?: Partial<CascadeParams>): CascadeExact {
  const { steps, p, pc } = resolveParams(cascadeParamSpecs, cascadeDefaults, given);
  let clean = 1;
  let faults = 0;
  for (let k = 0; k < steps; k++) {
    faults += clean * p + (1 - clean) * pc;
    clean *= 1 - p;
  }
  const independent = steps * p;
  return {
    faultsPerRun: faults,
    contaminatedRate: 1 - clean,
    independentFaultsPerRun: independent,
    amplification: faults / independent,
  };
}

export interface CascadeMonteCarlo {
  faultsPerRun: number;
  faultsPerRunCi95: Estimate['ci95'];
  contaminatedRate: number;
  contaminatedRateCi95: Estimate['ci95'];
  independentFaultsPerRun: number;
  independentFaultsPerRunCi95: Estimate['ci95'];
  amplification: number;
  trials: number;
  seed: number;
}

/** The post's two simulations (coupled and independent), 200,000 runs each by default. */
export function cascadeMonteCarlo(
  given?: Partial<CascadeParams>,
  options?: MonteCarloOptions,
): CascadeMonteCarlo {
  const { steps, p, pc } = resolveParams(cascadeParamSpecs, cascadeDefaults, given);
  const { trials, seed, report, finish } = monteCarloSettings(options, 200_000);
  const random = simRandom(seed);
  // The clean phase ends at the first fault, after Geometric(p) clean steps: one logarithm. After
  // it every step faults with p_c: a Bernoulli each, compared as raw 32 bits against p_c·2³².
  // The independent count is Binomial(steps, p), drawn from its CDF table (built once).
  const logClean = Math.log1p(-p);
  const dirtyThreshold = pc * 4_294_967_296;
  const binomial = steps <= 4096 ? binomialTable(steps, p) : undefined;
  const cleanThreshold = p * 4_294_967_296;
  const coupled = new MeanAccumulator();
  const independent = new MeanAccumulator();
  let contaminated = 0;
  for (let trial = 0; trial < trials; trial++) {
    if ((trial & 4095) === 0 && report) report(trial, trials);
    const firstFault = p === 0 ? steps : Math.floor(Math.log(1 - random.uniform()) / logClean);
    let faults = 0;
    if (firstFault < steps) {
      contaminated += 1;
      faults = 1;
      for (let s = firstFault + 1; s < steps; s++) if (random.bits() < dirtyThreshold) faults += 1;
    }
    coupled.add(faults);
    let independentFaults = 0;
    if (binomial) {
      const bits = random.bits();
      while (bits >= (binomial[independentFaults] as number)) independentFaults++;
    } else {
      for (let s = 0; s < steps; s++) if (random.bits() < cleanThreshold) independentFaults += 1;
    }
    independent.add(independentFaults);
  }
  finish();
  const faults = coupled.estimate();
  const rate = proportionEstimate(contaminated, trials);
  const indep = independent.estimate();
  return {
    faultsPerRun: faults.value,
    faultsPerRunCi95: faults.ci95,
    contaminatedRate: rate.value,
    contaminatedRateCi95: rate.ci95,
    independentFaultsPerRun: indep.value,
    independentFaultsPerRunCi95: indep.ci95,
    amplification: faults.value / indep.value,
    trials,
    seed,
  };
}

/** Cumulative Binomial(n, p) probabilities as 32-bit thresholds; the last is +∞ so a scan stops. */
function binomialTable(n: number, p: number): Float64Array {
  const table = new Float64Array(n + 1);
  let probability = (1 - p) ** n;
  let cumulative = 0;
  for (let k = 0; k <= n; k++) {
    cumulative += probability;
    table[k] = cumulative * 4_294_967_296;
    probability *= p === 1 ? 0 : ((n - k) / (k + 1)) * (p / (1 - p));
  }
  table[n] = Number.POSITIVE_INFINITY;
  if (p === 1) table.fill(0, 0, n);
  return table;
}
