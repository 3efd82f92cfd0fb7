import { amountParam, type ParamSpec, resolveParams } from '../params.js';
import { tokenCostUsd, tokenPriceParams } from './shared.js';

/**
 * Where compaction alone runs out (the transcript-retrieval post in the cross-posts): every
 * `chunk` raw steps fold into one `digest`-token summary, and every later step re-sends every
 * earlier digest. Quadratic still, with a small constant and a late onset.
 */
export interface DigestParams {
  steps: number;
  /** Tokens per digest. */
  digest: number;
  /** Raw steps folded into one digest. */
  chunk: number;
  system: number;
  output: number;
  inputPrice: number;
  outputPrice: number;
}

export const digestDefaults: DigestParams = {
  steps: 100,
  digest: 50,
  chunk: 10,
  system: 1500,
  output: 300,
  inputPrice: 3,
  outputPrice: 15,
};

export const digestParamSpecs: readonly ParamSpec[] = [
  {
    key: 'steps',
    flag: '--steps',
    kind: 'integer',
    min: 1,
    max: 100_000_000,
    description: 'steps in the run',
    slider: { min: 10, max: 5_000, step: 10 },
  },
  amountParam('digest', 'tokens per digest', 500, 10),
  {
    key: 'chunk',
    flag: '--chunk',
    kind: 'integer',
    min: 1,
    description: 'raw steps folded into one digest',
    slider: { min: 1, max: 50, step: 1 },
  },
  amountParam('system', 'system prompt + task tokens', 10_000, 100),
  amountParam('output', 'tokens emitted per step', 2_000, 50),
  ...tokenPriceParams,
];

export interface DigestResult {
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** Digest tokens the last step re-sends. */
  lastDigestTokens: number;
}

/**
 * Step k sends `system + ⌊(k−1)/chunk⌋·digest`; the sum of the floors has a closed form, so this
 * is O(1) at any run length.
 *
 * @example
 * digestCost({ steps: 5000 }).costUsd; // 232.125
 */
export function digestCost(given?: Partial<DigestParams>): DigestResult {
  const params = resolveParams(digestParamSpecs, digestDefaults, given);
  const { steps, chunk, digest, system, output } = params;
  // Σ_{j=0}^{steps−1} ⌊j/chunk⌋ = chunk·q(q−1)/2 + q·r, where steps = q·chunk + r.
  const q = Math.floor(steps / chunk);
  const r = steps - q * chunk;
  const floorSum = (chunk * q * (q - 1)) / 2 + q * r;
  const inputTokens = steps * system + floorSum * digest;
  const outputTokens = steps * output;
  return {
    costUsd: tokenCostUsd(inputTokens, outputTokens, params),
    inputTokens,
    outputTokens,
    lastDigestTokens: Math.floor((steps - 1) / chunk) * digest,
  };
}
