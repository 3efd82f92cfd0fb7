import type { ParamSpec } from '../params.js';

/** Input and output prices, USD per million tokens, shared by every token-cost model. */
export const tokenPriceParams: readonly ParamSpec[] = [
  {
    key: 'inputPrice',
    flag: '--input-price',
    kind: 'number',
    min: 0,
    description: 'USD per million input tokens',
    slider: { min: 0, max: 30, step: 0.25 },
  },
  {
    key: 'outputPrice',
    flag: '--output-price',
    kind: 'number',
    min: 0,
    description: 'USD per million output tokens',
    slider: { min: 0, max: 150, step: 1 },
  },
];

/** Cost in USD of input and output tokens at per-million prices. */
export function tokenCostUsd(
  inputTokens: number,
  outputTokens: number,
  prices: { inputPrice: number; outputPrice: number },
): number {
  return (inputTokens * prices.inputPrice + outputTokens * prices.outputPrice) / 1e6;
}
