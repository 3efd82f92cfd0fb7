import { amountParam, type ParamSpec } from '../params.js';

/** Input and output prices, USD per million tokens, shared by every token-cost model. */
export const tokenPriceParams: readonly ParamSpec[] = [
  amountParam('inputPrice', 'USD per million input tokens', 30, 0.25),
  amountParam('outputPrice', 'USD per million output tokens', 150, 1),
];

/** Cost in USD of input and output tokens at per-million prices. */
export function tokenCostUsd(
  inputTokens: number,
  outputTokens: number,
  prices: { inputPrice: number; outputPrice: number },
): number {
  return (inputTokens * prices.inputPrice + outputTokens * prices.outputPrice) / 1e6;
}
