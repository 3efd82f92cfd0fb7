import { amountParam, type ParamSpec, resolveParams } from '../params.js';
import { tokenCostUsd, tokenPriceParams } from './shared.js';

/**
 * Prompt caching against a growing transcript, and best-of-N on top (the bill post in the
 * cross-posts). The stable prefix (`system`) is written to the cache on the first call at
 * `cacheWrite` × the input price and read on every later call at `cacheRead` ×; the transcript,
 * which changes every step, is paid in full. Best-of-N runs N whole attempts.
 */
export interface CacheParams {
  steps: number;
  /** Stable prefix tokens: system prompt and tool schemas. */
  system: number;
  output: number;
  result: number;
  /** Price multiplier for writing the prefix to the cache (5-minute TTL: 1.25). */
  cacheWrite: number;
  /** Price multiplier for a cache hit (0.1). */
  cacheRead: number;
  /** Parallel attempts per run, all paid. */
  bestOf: number;
  inputPrice: number;
  outputPrice: number;
}

export const cacheDefaults: CacheParams = {
  steps: 10,
  system: 4000,
  output: 300,
  result: 500,
  cacheWrite: 1.25,
  cacheRead: 0.1,
  bestOf: 1,
  inputPrice: 3,
  outputPrice: 15,
};

export const cacheParamSpecs: readonly ParamSpec[] = [
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 10_000_000,
    description: 'steps in the run',
    slider: { min: 1, max: 80, step: 1 },
  },
  amountParam('system', 'stable prefix tokens (cached)', 20_000, 250),
  amountParam('output', 'tokens emitted per step', 2_000, 50),
  amountParam('result', 'tokens each tool result appends', 5_000, 50),
  {
    key: 'cacheWrite',
    flag: '--cache-write',
    kind: 'number',
    min: 0,
    description: 'price multiplier for a cache write',
    slider: { min: 1, max: 2, step: 0.05 },
  },
  amountParam('cacheRead', 'price multiplier for a cache hit', 1, 0.01),
  {
    key: 'bestOf',
    flag: '--best-of',
    kind: 'integer',
    min: 1,
    max: 1_000,
    description: 'parallel attempts per run, all paid',
    slider: { min: 1, max: 8, step: 1 },
  },
  ...tokenPriceParams,
];

export interface CacheResult {
  naiveUsd: number;
  cachedUsd: number;
  /** 1 − cached ÷ naive. */
  savings: number;
}

/**
 * @example
 * cacheCost({ steps: 40 }); // { naiveUsd: 2.532, cachedUsd: 2.1138, savings: 0.1652… }
 */
export function cacheCost(given?: Partial<CacheParams>): CacheResult {
  const params = resolveParams(cacheParamSpecs, cacheDefaults, given);
  const { steps, system, output, result, bestOf } = params;
  const transcript = ((output + result) * steps * (steps - 1)) / 2;
  const outputTokens = steps * output;
  const naive = tokenCostUsd(steps * system + transcript, outputTokens, params);
  const stable = system * params.cacheWrite + (steps - 1) * system * params.cacheRead;
  const cached = tokenCostUsd(stable + transcript, outputTokens, params);
  return {
    naiveUsd: naive * bestOf,
    cachedUsd: cached * bestOf,
    savings: naive > 0 ? 1 - cached / naive : 0,
  };
}
