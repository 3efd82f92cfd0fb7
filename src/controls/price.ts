import type { Usage } from '../model/model.js';

/** What a model charges, in USD per million tokens. */
export interface ModelPrice {
  inputUsdPerMillionTokens: number;
  outputUsdPerMillionTokens: number;
  /** @default inputUsdPerMillionTokens */
  cacheReadUsdPerMillionTokens?: number;
  /** @default inputUsdPerMillionTokens */
  cacheWriteUsdPerMillionTokens?: number;
}

/** Prices by model id; `'*'` is the fallback for ids the table does not name. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** The USD a call with this usage costs at this price. */
export function costUsdOf(usage: Usage, price: ModelPrice): number {
  const cacheRead = price.cacheReadUsdPerMillionTokens ?? price.inputUsdPerMillionTokens;
  const cacheWrite = price.cacheWriteUsdPerMillionTokens ?? price.inputUsdPerMillionTokens;
  return (
    (usage.inputTokens * price.inputUsdPerMillionTokens +
      usage.outputTokens * price.outputUsdPerMillionTokens +
      usage.cacheReadTokens * cacheRead +
      usage.cacheWriteTokens * cacheWrite) /
    1_000_000
  );
}

/** The price for a model id: the exact entry, else `'*'`, else undefined. */
export function priceFor(table: PriceTable, model: string | undefined): ModelPrice | undefined {
  return (model !== undefined ? table[model] : undefined) ?? table['*'];
}
