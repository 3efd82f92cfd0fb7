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

/**
 * Prices by model id; `'*'` is the fallback for ids the table does not name. Keys may be the
 * undated names you pass to an adapter (`claude-sonnet-4-5`): see {@link resolvePrice} for how a
 * provider's dated id (`claude-sonnet-4-5-20250929`) finds them.
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** How {@link resolvePrice} found a price. */
export type PriceMatch = 'exact' | 'undated' | 'prefix' | 'fallback';

/** A price {@link resolvePrice} found: the table key it came from and the id that led there. */
export interface ResolvedPrice {
  price: ModelPrice;
  /** The table key used (`'*'` for the fallback). */
  matched: string;
  /** Which rule matched. */
  rule: PriceMatch;
  /** The candidate id the key matched; undefined for the fallback. */
  id: string | undefined;
}

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

/** A trailing date stamp: `-20250929`, `-2025-09-29` or `@20250929`. */
const dateStamp = /[-@](?:\d{8}|\d{4}-\d{2}-\d{2})$/;

/** What may follow a table key for it to price a longer id: the key ends at one of these. */
const separators: ReadonlySet<string> = new Set(['-', '@', ':']);
const digit = /[0-9]/;

/** The fallback key. */
const anyModelKey = '*';

/**
 * The price for a call, found from candidate model ids in order (for a response: the id the
 * provider reported, then the requested model's `name`). Blank candidates (Azure reports
 * `model: ''`) and `undefined` are skipped. For each candidate, in this order:
 *
 * 1. **exact**: the table has the id as a key.
 * 2. **undated**: the id with a trailing date stamp removed (`-20250929`, `-2025-09-29`,
 *    `@20250929`) is a key: `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`,
 *    `gpt-4o-2024-08-06` → `gpt-4o`, `claude-sonnet-4-5@20250929` → `claude-sonnet-4-5`.
 * 3. **prefix**: the longest key that the id starts with *at a boundary*, followed by a date or
 *    version: the key is followed in the id by `-`, `@` or `:` and then a digit. So
 *    `claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929-v1:0`; `gpt-4` never prices `gpt-4o`
 *    (no boundary); `gpt-4o` never prices `gpt-4o-mini` nor `o1` `o1-pro` (a different model, maybe
 *    dearer, follows the boundary): such an id has no price and, under a spend budget, fails closed.
 *
 * Only after every candidate failed: **fallback**, the `'*'` entry. Undefined when nothing matches;
 * under a spend budget the loop then refuses the call (`over_budget` with `unpriced`) rather than
 * count it free. Keys are matched case-sensitively, as own properties of the table only; `'*'` is
 * only ever the fallback, never an exact or prefix match.
 */
export function resolvePrice(
  table: PriceTable,
  ...candidates: readonly (string | undefined)[]
): ResolvedPrice | undefined {
  for (const id of candidates) {
    if (id === undefined || id.trim() === '') continue;
    const found = matchId(table, id);
    if (found) return found;
  }
  const fallback = entry(table, anyModelKey);
  return fallback ? { price: fallback, matched: anyModelKey, rule: 'fallback', id: undefined } : undefined;
}

/** The price for a model id by the rules of {@link resolvePrice}, else undefined. */
export function priceFor(table: PriceTable, model: string | undefined): ModelPrice | undefined {
  return resolvePrice(table, model)?.price;
}

function matchId(table: PriceTable, id: string): ResolvedPrice | undefined {
  const exact = id === anyModelKey ? undefined : entry(table, id);
  if (exact) return { price: exact, matched: id, rule: 'exact', id };
  const undated = id.replace(dateStamp, '');
  if (undated !== id && undated !== '' && undated !== anyModelKey) {
    const price = entry(table, undated);
    if (price) return { price, matched: undated, rule: 'undated', id };
  }
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (key === anyModelKey || key === '' || key.length >= id.length) continue;
    if (!id.startsWith(key) || !separators.has(id.charAt(key.length))) continue;
    // Only a date or a version may follow: `gpt-4o` must not price `gpt-4o-mini`, nor `o1` `o1-pro`.
    if (!digit.test(id.charAt(key.length + 1))) continue;
    if (best === undefined || key.length > best.length) best = key;
  }
  const price = best === undefined ? undefined : entry(table, best);
  return best !== undefined && price ? { price, matched: best, rule: 'prefix', id } : undefined;
}

/** An own entry of the table: never `constructor` or another inherited property. */
function entry(table: PriceTable, key: string): ModelPrice | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * {@link resolvePrice} remembered per pair of candidate ids, for a run that prices the same model
 * several times a step. Bounded: past `limit` pairs it resolves without remembering.
 */
export class PriceMemo {
  readonly #table: PriceTable;
  /** By first id, then by second: a lookup builds no key (a run prices several times a step). */
  readonly #seen = new Map<string | undefined, Map<string | undefined, ResolvedPrice | null>>();
  #pairs = 0;
  readonly #limit: number;

  constructor(table: PriceTable, limit = 64) {
    this.#table = table;
    this.#limit = limit;
  }

  resolve(first: string | undefined, second?: string): ResolvedPrice | undefined {
    let bySecond = this.#seen.get(first);
    const seen = bySecond?.get(second);
    if (seen !== undefined) return seen ?? undefined;
    const found = resolvePrice(this.#table, first, second);
    if (this.#pairs < this.#limit) {
      if (bySecond === undefined) {
        bySecond = new Map();
        this.#seen.set(first, bySecond);
      }
      bySecond.set(second, found ?? null);
      this.#pairs++;
    }
    return found;
  }
}
