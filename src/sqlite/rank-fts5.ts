import { bm25TermScore, bm25TermScoreBound, flooredIdf, isCommonTerm } from '../context/bm25.js';
import { summationOrder } from '../context/transcript-index-options.js';
import type { Fts5Statistics } from './fts5-statistics.js';

/** A matched row, as ranking reads it. */
export interface RankedRow {
  /** The entry's rowid, in append order. */
  seq: number;
  step: number;
  /** FTS5's `bm25()` over the phrases matched: negative, lower is better. */
  relevance: number;
}

export interface Fts5Ranking {
  statistics: Fts5Statistics;
  /** The run's eligible rows holding any of `terms` (a MATCH in that order), best first, at most `limit`. */
  match(terms: readonly string[], limit: number): RankedRow[];
  /** The terms of the row's indexed text. */
  indexedTerms(seq: number): string[];
}

/**
 * The k best rows for the query's distinct `terms`, best first, each with its BM25 score (FTS5's
 * `-bm25()` over every term, to the bit), and the ties ranked by the later step, then the later
 * append.
 *
 * FTS5 computes `bm25()` for every row a MATCH yields, and a query's common words ("the",
 * "error": in half the rows or more) make that every row. Their idf is floored at 1e-6, so
 * together they add less than 2.2e-6 × their number to any score. So the rare terms are matched
 * first, in {@link summationOrder}; when that gives k rows scoring above what the common terms
 * could add, no row holding only common terms can reach the top k, and the rows near the k-th
 * get the common terms' shares added here, after the rare ones, as FTS5 would have summed them.
 * Otherwise every term is matched (FTS5's own ranking).
 */
export function rankFts5(
  ranking: Fts5Ranking,
  queryTerms: readonly string[],
  k: number,
): { row: RankedRow; score: number }[] {
  const { rows: entries, tokens } = ranking.statistics.totals();
  if (entries === 0) return [];
  const found = queryTerms.flatMap((term) => {
    const hits = ranking.statistics.rowsWith(term);
    return hits > 0 ? [{ term, common: isCommonTerm(entries, hits) }] : [];
  });
  const ordered = summationOrder(found, (term) => term.common);
  const rare = ordered.filter((term) => !term.common).map((term) => term.term);
  const common = ordered.filter((term) => term.common).map((term) => term.term);
  if (rare.length > 0 && common.length > 0) {
    const ranked = rareThenCommon(ranking, rare, common, k, tokens / entries);
    if (ranked) return ranked;
  }
  if (ordered.length === 0) return [];
  return ranking
    .match(
      ordered.map((term) => term.term),
      k,
    )
    .map((row) => ({ row, score: -row.relevance }));
}

function rareThenCommon(
  ranking: Fts5Ranking,
  rare: readonly string[],
  common: readonly string[],
  k: number,
  averageLength: number,
): { row: RankedRow; score: number }[] | undefined {
  const commonBound = common.length * bm25TermScoreBound(flooredIdf);
  let limit = k + 16;
  let rows = ranking.match(rare, limit);
  if (rows.length < k) return undefined;
  const kth = -rows[k - 1]!.relevance;
  // Margins far above rounding error.
  if (!(kth > commonBound * (1 + 1e-9))) return undefined;
  const lowest = kth * (1 - 1e-12) - commonBound;
  // Every row that the common terms could lift to the k-th score.
  while (rows.length === limit && -rows.at(-1)!.relevance >= lowest) {
    limit *= 4;
    rows = ranking.match(rare, limit);
  }
  const commonTerms = new Set(common);
  const scored = rows
    .filter((row) => -row.relevance >= lowest)
    .map((row) => {
      const frequencies = new Map<string, number>();
      for (const term of ranking.indexedTerms(row.seq))
        if (commonTerms.has(term)) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
      const length = ranking.statistics.rowLength(row.seq);
      let score = -row.relevance;
      for (const term of common) {
        const frequency = frequencies.get(term) ?? 0;
        if (frequency > 0) score += bm25TermScore(flooredIdf, frequency, length, averageLength);
      }
      return { row, score };
    });
  scored.sort((a, b) => b.score - a.score || b.row.step - a.row.step || b.row.seq - a.row.seq);
  return scored.slice(0, k);
}
