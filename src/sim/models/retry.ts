import { AliasTable } from '../alias-table.js';
import { type Estimate, MeanAccumulator, proportionEstimate } from '../estimate.js';
import { type MonteCarloOptions, monteCarloSettings, type SkippedMonteCarlo } from '../monte-carlo.js';
import { amountParam, type ParamSpec, probabilityParam, resolveParams } from '../params.js';
import { type SimRandom, simRandom } from '../random.js';
import { tokenPriceParams } from './shared.js';

/**
 * Retry in place versus restart (post-22, "Retry budgets"). Each of `steps` logical steps is one
 * model call that re-reads the whole transcript. In place: a failed call leaves its output and an
 * error observation in the transcript and the step is tried again, up to `retryCap` retries, after
 * which the run gives up. Restart: a failed call throws the transcript away and the run starts over
 * from step 0 until one pass is clean (so `retryCap` and `error` do not apply, and p must be < 1).
 */
export interface RetryParams {
  mode: 'inplace' | 'restart';
  /** Probability that one step's call fails. */
  p: number;
  steps: number;
  /** Tokens of system prompt and task, re-sent as prefill on every call. */
  system: number;
  /** Tokens the model emits per call. */
  output: number;
  /** Tokens a successful tool result appends. */
  result: number;
  /** Tokens an error observation appends (in place only). */
  error: number;
  /** Retries per step before the run gives up (in place only). */
  retryCap: number;
  /** USD per million input tokens. */
  inputPrice: number;
  /** USD per million output tokens. */
  outputPrice: number;
}

export const retryDefaults: RetryParams = {
  mode: 'inplace',
  p: 0.2,
  steps: 8,
  system: 1500,
  output: 300,
  result: 500,
  error: 200,
  retryCap: 4,
  inputPrice: 3,
  outputPrice: 15,
};

export const retryParamSpecs: readonly ParamSpec[] = [
  {
    key: 'mode',
    flag: '--mode',
    kind: 'choice',
    choices: ['inplace', 'restart'],
    description: 'recovery: resume the failed step, or start the run over',
  },
  probabilityParam('p', 'per-step failure probability', 0.5, 0.01),
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 10_000,
    description: 'logical steps per run',
    slider: { min: 1, max: 40, step: 1 },
  },
  amountParam('system', 'system prompt + task tokens, re-sent every call', 10_000, 100),
  amountParam('output', 'tokens the model emits per call', 2_000, 50),
  amountParam('result', 'tokens a successful tool result appends', 5_000, 50),
  amountParam('error', 'tokens an error observation appends (in place)', 2_000, 50),
  {
    key: 'retryCap',
    flag: '--retry-cap',
    kind: 'integer',
    min: 0,
    max: 1_000,
    description: 'retries per step before giving up (in place)',
    slider: { min: 0, max: 10, step: 1 },
  },
  ...tokenPriceParams,
];

const crossCheck = (params: RetryParams) =>
  params.mode === 'restart' && params.p >= 1
    ? {
        key: 'p',
        problem: 'must be < 1 with --mode restart (a run that always fails restarts forever), got 1',
      }
    : undefined;

/** Checks and completes retry parameters; throws `SimParameterError` naming the flag. */
export function retryParams(given?: Partial<RetryParams>): RetryParams {
  return resolveParams(retryParamSpecs, retryDefaults, given, crossCheck);
}

export interface RetryExact {
  meanCostUsd: number;
  /** Mean cost ÷ the mean cost at p = 0 with every other parameter the same. */
  multiplier: number;
  /** Share of runs that hit the retry cap and failed for good (0 for restart). */
  gaveUpRate: number;
  /** Expected model calls per run. */
  meanCalls: number;
}

function callCost(params: RetryParams, prefillTokens: number): number {
  return (prefillTokens * params.inputPrice + params.output * params.outputPrice) / 1e6;
}

/**
 * The exact expectation. In place, the transcript is a function of (step, failures so far) and a
 * step's cost is linear in the failures, so two moments of their count carry the mean. Restart is
 * Wald's identity: passes are independent, so the mean is the mean pass cost over (1−p)^steps.
 */
export function retryExact(given?: Partial<RetryParams>): RetryExact {
  const params = retryParams(given);
  const base = retryExactUnchecked({ ...params, p: 0 });
  const result = retryExactUnchecked(params);
  return { ...result, multiplier: result.meanCostUsd / base.meanCostUsd };
}

function retryExactUnchecked(params: RetryParams): Omit<RetryExact, 'multiplier'> {
  const { p, steps, system, output, result, error, retryCap } = params;
  if (params.mode === 'restart') {
    let passCost = 0;
    let passCalls = 0;
    let reach = 1;
    for (let k = 0; k < steps; k++) {
      passCost += reach * callCost(params, system + k * (output + result));
      passCalls += reach;
      reach *= 1 - p;
    }
    return { meanCostUsd: passCost / reach, meanCalls: passCalls / reach, gaveUpRate: 0 };
  }
  // A step's cost is linear in the failures f before it (each adds output + error to the prefill),
  // so the mean needs only two moments of f over runs still going, not its distribution: the
  // mass still going, q^s, and E[f; still going], whose recurrence is below. O(steps) and no
  // allocation; the dynamic program over (step, f) it replaces took 15–20 ms on its first call
  // at 200 steps and cap 10 (interpreted, and a Float64Array per step for the GC to reclaim).
  const inputPrice = params.inputPrice / 1e6;
  const outputCost = (output * params.outputPrice) / 1e6;
  const perFailure = output + error;
  // Within a step the attempts are geometric: Σ_a p^a attempts are reached, the a-th re-reading
  // a·(output + error) more tokens, and the step ends in success after a failures w.p. p^a(1−p).
  let attemptsReached = 0;
  let attemptIndexSum = 0;
  for (let a = 0; a <= retryCap; a++) {
    attemptsReached += p ** a;
    attemptIndexSum += a * p ** a;
  }
  const giveUp = p ** (retryCap + 1);
  const stepSucceeds = 1 - giveUp;
  const failuresIfSucceeds = (1 - p) * attemptIndexSum;
  let going = 1;
  let failuresWhileGoing = 0;
  let cost = 0;
  let calls = 0;
  let gaveUp = 0;
  for (let s = 0; s < steps; s++) {
    const prefillIfNoFailures = system + s * (output + result);
    cost +=
      inputPrice *
        (going * (prefillIfNoFailures * attemptsReached + perFailure * attemptIndexSum) +
          failuresWhileGoing * perFailure * attemptsReached) +
      outputCost * going * attemptsReached;
    calls += going * attemptsReached;
    gaveUp += going * giveUp;
    // f' = f + this step's failures, counted only if the step succeeds.
    failuresWhileGoing = stepSucceeds * failuresWhileGoing + failuresIfSucceeds * going;
    going *= stepSucceeds;
  }
  return { meanCostUsd: cost, meanCalls: calls, gaveUpRate: gaveUp };
}

export interface RetryMonteCarlo {
  meanCostUsd: number;
  ci95: Estimate['ci95'];
  multiplier: number;
  multiplierCi95: Estimate['ci95'];
  gaveUpRate: number;
  gaveUpRateCi95: Estimate['ci95'];
  trials: number;
  seed: number;
}

/** The post's trial counts: 200,000 runs in place, 100,000 with restarts. */
export const retryDefaultTrials = { inplace: 200_000, restart: 100_000 } as const;

/** Runs the post's simulation, seeded; refuses (with the reason) when it would need > 2·10⁸ calls. */
export function retryMonteCarlo(
  given?: Partial<RetryParams>,
  options?: MonteCarloOptions,
): RetryMonteCarlo | SkippedMonteCarlo {
  const params = retryParams(given);
  const { trials, seed, report, finish } = monteCarloSettings(options, retryDefaultTrials[params.mode]);
  const expectedCalls = retryExactUnchecked(params).meanCalls * trials;
  if (!(expectedCalls <= 2e8)) {
    return { skipped: `would need about ${expectedCalls.toExponential(1)} simulated calls` };
  }
  const random = simRandom(seed);
  const inputPrice = params.inputPrice / 1e6;
  const outputCost = (params.output * params.outputPrice) / 1e6;
  const costs = new MeanAccumulator();
  const prices = { inputPrice, outputCost };
  const gaveUp =
    params.mode === 'inplace'
      ? simulateInPlace(params, prices, random, trials, costs, report)
      : simulateRestart(params, prices, random, trials, costs, report);
  finish();
  const base = retryExactUnchecked({ ...params, p: 0 }).meanCostUsd;
  const mean = costs.estimate();
  const gaveUpRate = proportionEstimate(gaveUp, trials);
  return {
    meanCostUsd: mean.value,
    ci95: mean.ci95,
    multiplier: mean.value / base,
    multiplierCi95: [mean.ci95[0] / base, mean.ci95[1] / base],
    gaveUpRate: gaveUpRate.value,
    gaveUpRateCi95: gaveUpRate.ci95,
    trials,
    seed,
  };
}

type Report = ((done: number, total: number) => void) | undefined;
type Prices = { inputPrice: number; outputCost: number };

// The hot loops live in their own functions so they stay optimized from one call to the next
// (the caller's epilogue deoptimizes on first use; a loop inside it would be recompiled each run).

/**
 * In place, a step ends after k failures and a success (probability p^k(1−p), k ≤ cap) or gives
 * up after cap + 1 failures: one draw per step from that table, as 32-bit thresholds, then the
 * step's calls are added in closed form (each failure adds output + error to the prefill).
 */
function simulateInPlace(
  params: RetryParams,
  prices: Prices,
  random: SimRandom,
  trials: number,
  costs: MeanAccumulator,
  report: Report,
): number {
  const { p, steps, system, output, result, error, retryCap } = params;
  const perCall = output + error;
  // Outcome k ≤ cap: k failures then a success; outcome cap + 1: give up. A scan of the cumulative
  // table as 32-bit thresholds: one draw, and one comparison 1 − p of the time (faster here than
  // an alias table's two draws).
  const stepOutcome = new Float64Array(retryCap + 2);
  let cumulative = 0;
  for (let k = 0; k <= retryCap; k++) {
    cumulative += p ** k * (1 - p);
    stepOutcome[k] = cumulative * 4_294_967_296;
  }
  stepOutcome[retryCap + 1] = Number.POSITIVE_INFINITY;
  let gaveUp = 0;
  for (let trial = 0; trial < trials; trial++) {
    if ((trial & 4095) === 0 && report) report(trial, trials);
    let prefillTokens = 0;
    let calls = 0;
    let transcript = system;
    for (let s = 0; s < steps; s++) {
      const bits = random.bits();
      let k = 0;
      while (bits >= (stepOutcome[k] as number)) k++;
      const attempts = k <= retryCap ? k + 1 : retryCap + 1;
      calls += attempts;
      prefillTokens += attempts * transcript + (perCall * attempts * (attempts - 1)) / 2;
      if (k > retryCap) {
        gaveUp += 1;
        break;
      }
      transcript += attempts * output + k * error + result;
    }
    costs.add(prefillTokens * prices.inputPrice + calls * prices.outputCost);
  }
  return gaveUp;
}

/** With restarts, a pass survives j steps and then fails, j ~ Geometric(p): one logarithm a pass. */
function simulateRestart(
  params: RetryParams,
  prices: Prices,
  random: SimRandom,
  trials: number,
  costs: MeanAccumulator,
  report: Report,
): number {
  const { p, steps, system, output, result } = params;
  const perStep = output + result;
  // A pass survives j steps then fails (j < steps, probability (1−p)^j·p) or is clean (j = steps).
  const passOutcome =
    steps <= 100_000
      ? new AliasTable(
          Array.from({ length: steps + 1 }, (_, j) => (j < steps ? (1 - p) ** j * p : (1 - p) ** steps)),
        )
      : undefined;
  const logSurvive = Math.log1p(-p);
  for (let trial = 0; trial < trials; trial++) {
    if ((trial & 4095) === 0 && report) report(trial, trials);
    let prefillTokens = 0;
    let calls = 0;
    for (;;) {
      const survived = passOutcome
        ? passOutcome.sample(random)
        : p === 0
          ? steps
          : Math.floor(Math.log(1 - random.uniform()) / logSurvive);
      const callsThisPass = survived >= steps ? steps : survived + 1;
      calls += callsThisPass;
      prefillTokens += callsThisPass * system + (perStep * callsThisPass * (callsThisPass - 1)) / 2;
      if (survived >= steps) break;
    }
    costs.add(prefillTokens * prices.inputPrice + calls * prices.outputCost);
  }
  return 0;
}
