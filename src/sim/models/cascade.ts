import { AliasTable } from '../alias-table.js';
import { type Estimate, MeanAccumulator, proportionEstimate } from '../estimate.js';
import { type MonteCarloOptions, monteCarloSettings } from '../monte-carlo.js';
import { type ParamSpec, probabilityParam, resolveParams } from '../params.js';
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
  probabilityParam('p', 'baseline per-step fault probability', 0.5, 0.01),
  probabilityParam('pc', 'per-step fault probability once contaminated', 1, 0.01),
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
  // Sampled by holding times, not step by step: the clean phase ends at the first fault (T clean
  // steps, P(T = t) = (1−p)^t·p, or no fault at all), then each of the m = steps − T − 1 later steps
  // faults with p_c (Binomial(m, p_c)); the independent count is Binomial(steps, p). Each is one
  // alias-table draw; past 256 steps the per-m tables would be large, so the tail is drawn step by step.
  const firstFault = new AliasTable(
    Array.from({ length: steps + 1 }, (_, t) => (t < steps ? (1 - p) ** t * p : (1 - p) ** steps)),
  );
  const tails =
    steps <= 256
      ? Array.from({ length: steps }, (_, m) => new AliasTable(binomialWeights(m, pc)))
      : undefined;
  const independentCount = steps <= 100_000 ? new AliasTable(binomialWeights(steps, p)) : undefined;
  const dirtyThreshold = pc * 4_294_967_296;
  const cleanThreshold = p * 4_294_967_296;
  const coupled = new MeanAccumulator();
  const independent = new MeanAccumulator();
  let contaminated = 0;
  for (let trial = 0; trial < trials; trial++) {
    if ((trial & 4095) === 0 && report) report(trial, trials);
    const t = firstFault.sample(random);
    let faults = 0;
    if (t < steps) {
      contaminated += 1;
      const later = steps - t - 1;
      if (tails) faults = 1 + (tails[later] as AliasTable).sample(random);
      else {
        faults = 1;
        for (let s = 0; s < later; s++) if (random.bits() < dirtyThreshold) faults += 1;
      }
    }
    coupled.add(faults);
    let independentFaults = 0;
    if (independentCount) independentFaults = independentCount.sample(random);
    else for (let s = 0; s < steps; s++) if (random.bits() < cleanThreshold) independentFaults += 1;
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

/** Binomial(n, p) probabilities for 0..n, by the ratio recurrence (exact at p = 0 and p = 1). */
export function binomialWeights(n: number, p: number): Float64Array {
  const weights = new Float64Array(n + 1);
  if (p <= 0) weights[0] = 1;
  else if (p >= 1) weights[n] = 1;
  else {
    let probability = (1 - p) ** n;
    for (let k = 0; k <= n; k++) {
      weights[k] = probability;
      probability *= ((n - k) / (k + 1)) * (p / (1 - p));
    }
  }
  return weights;
}
