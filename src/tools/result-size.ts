import type { TokenEstimator } from '../tokens/token-estimator.js';

/** What was dropped from a result that did not fit. */
export interface Truncation {
  totalTokens: number;
  shownTokens: number;
  /** Set when whole items were dropped from a list. */
  field?: string;
  shownItems?: number;
  totalItems?: number;
}

/**
 * Fits a tool result into `maxTokens`, never silently: whole list items are dropped from the end
 * of the largest list (the top-level array, or the largest array field of an object) when there is
 * one, else the text is cut; either way a marker line says what was dropped and how to get the
 * rest.
 */
export function sizeResult(
  output: unknown,
  text: string,
  maxTokens: number,
  estimator: TokenEstimator,
  how: { tool: string; paging: string | undefined },
): { content: string; truncation: Truncation | undefined } {
  const totalTokens = estimator.countText(text);
  if (totalTokens <= maxTokens) return { content: text, truncation: undefined };
  const paging = how.paging ?? `call ${how.tool} again with a narrower request`;

  const list = largestList(output);
  if (list) {
    const render = (count: number) => {
      const shown = list.replace(list.items.slice(0, count));
      const note = `[reins: result truncated to fit ${maxTokens.toLocaleString('en-US')} tokens: showing ${count} of ${list.items.length} items${list.field ? ` of \`${list.field}\`` : ''} (about ${totalTokens.toLocaleString('en-US')} tokens in full). To see the rest, ${paging}.]`;
      return `${JSON.stringify(shown)}\n${note}`;
    };
    const count = largestFitting(list.items.length, (k) => estimator.countText(render(k)) <= maxTokens);
    if (count >= 0) {
      const content = render(count);
      const truncation: Truncation = {
        totalTokens,
        shownTokens: estimator.countText(content),
        shownItems: count,
        totalItems: list.items.length,
      };
      if (list.field) truncation.field = list.field;
      return { content, truncation };
    }
  }

  const cut = (chars: number) =>
    `${text.slice(0, chars)}\n[reins: result truncated to fit ${maxTokens.toLocaleString('en-US')} tokens: showing the first ${chars.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters (about ${totalTokens.toLocaleString('en-US')} tokens in full). To see the rest, ${paging}.]`;
  const chars = Math.max(
    0,
    largestFitting(text.length, (n) => estimator.countText(cut(n)) <= maxTokens),
  );
  const content = cut(chars);
  return { content, truncation: { totalTokens, shownTokens: estimator.countText(content) } };
}

interface List {
  items: unknown[];
  field: string | undefined;
  replace(items: unknown[]): unknown;
}

function largestList(output: unknown): List | undefined {
  if (Array.isArray(output)) return { items: output, field: undefined, replace: (items) => items };
  if (output === null || typeof output !== 'object') return undefined;
  let best: { key: string; size: number } | undefined;
  for (const [key, value] of Object.entries(output)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    const size = JSON.stringify(value).length;
    if (!best || size > best.size) best = { key, size };
  }
  if (!best) return undefined;
  const key = best.key;
  const record = output as Record<string, unknown>;
  return { items: record[key] as unknown[], field: key, replace: (items) => ({ ...record, [key]: items }) };
}

/** The largest n in [0, max] with fits(n) true, assuming fits is monotone; -1 if even 0 does not fit. */
function largestFitting(max: number, fits: (n: number) => boolean): number {
  if (!fits(0)) return -1;
  let low = 0;
  let high = max;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}
