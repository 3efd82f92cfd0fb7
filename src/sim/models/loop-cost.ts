import { amountParam, type ParamSpec, resolveParams } from '../params.js';

/**
 * The lesson's cost table and estimate rule (lesson-agents, "The bill grows quadratically-ish"
 * and practice problem 1): a `base`-token prompt, a `result`-token observation per step, the
 * whole context re-sent each step, and billed tokens = the sum of the prefixes sent.
 */
export interface LoopCostParams {
  steps: number;
  /** System prompt plus tool definitions. */
  base: number;
  /** Tokens each tool result adds. */
  result: number;
}

export const loopCostDefaults: LoopCostParams = { steps: 10, base: 2000, result: 800 };

export const loopCostParamSpecs: readonly ParamSpec[] = [
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 10_000_000,
    description: 'model calls in the run',
    slider: { min: 1, max: 30, step: 1 },
  },
  amountParam('base', 'system prompt + tool definitions, tokens', 10_000, 100),
  amountParam('result', 'tokens each tool result adds', 5_000, 50),
];

export interface LoopCostResult {
  /** Σ_{k=0}^{steps−1} (base + k·result). */
  billedTokens: number;
  /** base + steps·result: the context after the last result is appended. */
  finalContextTokens: number;
  /** billedTokens ÷ base (what one call bills). */
  ratioToOneStep: number;
  /** The lesson's rule of thumb, steps·base + steps²/2·result (an upper bound). */
  estimateRuleTokens: number;
  /** What "steps × average call" would guess: steps·base. */
  independentCallsTokens: number;
}

/**
 * @example
 * loopCost(); // { billedTokens: 56000, finalContextTokens: 10000, ratioToOneStep: 28, … }
 */
export function loopCost(given?: Partial<LoopCostParams>): LoopCostResult {
  const { steps, base, result } = resolveParams(loopCostParamSpecs, loopCostDefaults, given);
  const billedTokens = steps * base + (result * steps * (steps - 1)) / 2;
  return {
    billedTokens,
    finalContextTokens: base + steps * result,
    ratioToOneStep: base > 0 ? billedTokens / base : Number.NaN,
    estimateRuleTokens: steps * base + ((steps * steps) / 2) * result,
    independentCallsTokens: steps * base,
  };
}

/** The billed tokens step by step: the prefix each call sends and the running total. */
export function loopCostSteps(
  given?: Partial<LoopCostParams>,
): { step: number; sentTokens: number; billedSoFar: number }[] {
  const { steps, base, result } = resolveParams(loopCostParamSpecs, loopCostDefaults, given);
  let billedSoFar = 0;
  return Array.from({ length: steps }, (_, k) => {
    const sentTokens = base + k * result;
    billedSoFar += sentTokens;
    return { step: k + 1, sentTokens, billedSoFar };
  });
}
