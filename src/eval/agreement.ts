import { ConfigurationError } from '../errors/reins-error.js';

/**
 * How two raters labeled the same items: `counts[i][j]` items that rater `a` labeled
 * `categories[i]` and rater `b` labeled `categories[j]`. Rows are `a`, columns `b`.
 */
export interface ConfusionMatrix<Label extends string = string> {
  categories: readonly Label[];
  counts: number[][];
  /** Items rated. */
  n: number;
}

function checkPaired(a: readonly unknown[], b: readonly unknown[]): void {
  if (a.length !== b.length)
    throw new ConfigurationError('b', `needs one label per item of a (${a.length}), got ${b.length}`);
}

/**
 * Tallies two raters' labels of the same items. `categories` fixes the order of rows and columns
 * (give it for an ordinal scale, or to show a category nobody used); by default the labels in order
 * of first appearance in `a`, then `b`. A label outside `categories` throws a `ConfigurationError`.
 *
 * @example
 * confusionMatrix(['pass', 'fail', 'pass'], ['pass', 'pass', 'pass'], ['fail', 'pass']);
 * // { categories: ['fail', 'pass'], counts: [[0, 1], [0, 2]], n: 3 }
 */
export function confusionMatrix<Label extends string>(
  a: readonly Label[],
  b: readonly Label[],
  categories: readonly Label[] = [...new Set([...a, ...b])],
): ConfusionMatrix<Label> {
  checkPaired(a, b);
  const index = new Map<string, number>();
  for (const category of categories) {
    if (index.has(category)) throw new ConfigurationError('categories', `"${category}" is listed twice`);
    index.set(category, index.size);
  }
  const at = (label: string, rater: string, item: number): number => {
    const position = index.get(label);
    if (position === undefined)
      throw new ConfigurationError(`${rater}[${item}]`, `"${label}" is not one of the categories`);
    return position;
  };
  const counts = categories.map(() => categories.map(() => 0));
  a.forEach((label, item) => {
    const row = counts[at(label, 'a', item)] as number[];
    const column = at(b[item] as Label, 'b', item);
    row[column] = (row[column] as number) + 1;
  });
  return { categories, counts, n: a.length };
}

/**
 * κ from a confusion matrix with disagreement weights `weight(i, j)` (0 on the diagonal):
 * `1 − Σ w·observed / Σ w·expected`, expected from the product of the raters' marginals.
 * `null` when chance alone would produce no weighted disagreement (see {@link cohensKappa}).
 */
function kappaOf(matrix: ConfusionMatrix, weight: (i: number, j: number) => number): number | null {
  const { counts, n } = matrix;
  if (n === 0) return null;
  const rows = counts.map((row) => row.reduce((sum, count) => sum + count, 0));
  const columns = counts.map((_, j) => counts.reduce((sum, row) => sum + (row[j] as number), 0));
  let observed = 0;
  let expected = 0;
  for (const [i, row] of counts.entries()) {
    for (const [j, count] of row.entries()) {
      const w = weight(i, j);
      observed += w * count;
      expected += (w * (rows[i] as number) * (columns[j] as number)) / n;
    }
  }
  if (expected === 0) return null;
  return 1 - observed / expected;
}

/**
 * Cohen's κ: agreement above what chance would give, `(p_o − p_e)/(1 − p_e)`, with `p_e` from each
 * rater's own label rates. A judge that passes everything agrees with an 80/20 human split 80 % of
 * the time, and its κ is 0.
 *
 * Returns `null` when κ is undefined: no items, or `p_e = 1` (both raters gave every item the one
 * same label, so there is no variation to agree on beyond chance). Reported as unknown rather than
 * as 1, because such a calibration set cannot tell a reading judge from a constant one.
 *
 * @example
 * cohensKappa(['pass', 'pass', 'fail', 'pass', 'pass'], ['pass', 'pass', 'pass', 'pass', 'pass']); // 0
 */
export function cohensKappa<Label extends string>(a: readonly Label[], b: readonly Label[]): number | null {
  return kappaOf(confusionMatrix(a, b), (i, j) => (i === j ? 0 : 1));
}

export interface WeightedKappaOptions<Label extends string> {
  /** The scale in order, lowest first: distances between labels come from positions in it. */
  categories: readonly Label[];
  /**
   * How disagreement grows with distance `d` on a scale of `k` labels: `'linear'` is
   * `d/(k−1)`, `'quadratic'` is `(d/(k−1))²`, so near misses cost little.
   * @default 'quadratic'
   */
  weights?: 'linear' | 'quadratic';
}

/**
 * Weighted κ for an ordinal scale (1–5 scores, `fail < partial < pass`): a judge that says 4 where a
 * person said 5 disagrees less than one that says 1. `1 − Σ w·observed / Σ w·expected`. `null` when
 * undefined, as {@link cohensKappa}; with two categories it equals Cohen's κ.
 *
 * @example
 * weightedKappa(['1', '2', '3'], ['1', '3', '3'], { categories: ['1', '2', '3'], weights: 'linear' });
 */
export function weightedKappa<Label extends string>(
  a: readonly Label[],
  b: readonly Label[],
  options: WeightedKappaOptions<Label>,
): number | null {
  const { categories, weights = 'quadratic' } = options;
  const matrix = confusionMatrix(a, b, categories);
  const span = Math.max(1, categories.length - 1);
  return kappaOf(matrix, (i, j) => {
    const distance = Math.abs(i - j) / span;
    return weights === 'linear' ? distance : distance * distance;
  });
}
