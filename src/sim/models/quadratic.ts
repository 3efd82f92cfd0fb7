import { amountParam, type ParamSpec, resolveParams } from '../params.js';
import { tokenCostUsd, tokenPriceParams } from './shared.js';

/**
 * A run's bill with nothing failing (post-09, "Long agent runs are quadratic"). Step k re-sends
 * the system prompt plus what each of the k−1 earlier steps left in the window: its output and
 * `kept` tokens of its result (the whole result when nothing is truncated, a digest when it is).
 */
export interface QuadraticParams {
  steps: number;
  system: number;
  output: number;
  result: number;
  /** Tokens of each earlier step's result still in the window; defaults to `result`. */
  kept?: number;
  inputPrice: number;
  outputPrice: number;
}

export const quadraticDefaults: QuadraticParams = {
  steps: 10,
  system: 1500,
  output: 300,
  result: 600,
  inputPrice: 3,
  outputPrice: 15,
};

export const quadraticParamSpecs: readonly ParamSpec[] = [
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 10_000_000,
    description: 'steps in the run',
    slider: { min: 1, max: 120, step: 1 },
  },
  amountParam('system', 'system prompt + task tokens', 10_000, 100),
  amountParam('output', 'tokens the model emits per step', 2_000, 50),
  amountParam('result', 'tokens each tool result appends', 5_000, 50),
  {
    key: 'kept',
    flag: '--kept',
    kind: 'number',
    min: 0,
    optional: true,
    description: 'tokens of each earlier result kept in the window (default: --result)',
    slider: { min: 0, max: 5_000, step: 10 },
  },
  ...tokenPriceParams,
];

export interface QuadraticResult {
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** The prefill the last step sends. */
  lastPrefillTokens: number;
}

/**
 * Closed form: input = steps·system + (output + kept)·steps(steps−1)/2.
 *
 * @example
 * quadraticCost({ steps: 80 }).costUsd; // 9.252
 * quadraticCost({ steps: 80, kept: 40 }).costUsd; // 3.9432
 */
export function quadraticCost(given?: Partial<QuadraticParams>): QuadraticResult {
  const params = resolveParams(quadraticParamSpecs, quadraticDefaults, given);
  const { steps, system, output } = params;
  const kept = params.kept ?? params.result;
  const inputTokens = steps * system + ((output + kept) * steps * (steps - 1)) / 2;
  const outputTokens = steps * output;
  return {
    costUsd: tokenCostUsd(inputTokens, outputTokens, params),
    inputTokens,
    outputTokens,
    lastPrefillTokens: system + (steps - 1) * (output + kept),
  };
}
