/**
 * BM25 exactly as SQLite FTS5's `bm25()` computes it (fts5_aux.c), operation for operation, so
 * the memory index ranks as the SQLite one does and its scores equal `-bm25()` to the last bit
 * or two (Math.log and the C library's log may round differently).
 */
const k1 = 1.2;
const b = 0.75;
/** The idf FTS5 gives a term in half the entries or more (where the formula's would be ≤ 0). */
export const flooredIdf = 1e-6;

/**
 * A term's inverse document frequency among `entries` entries, `hits` of which hold it, floored
 * as FTS5 floors it: a term in half of the entries or more still counts, barely.
 */
export function bm25Idf(entries: number, hits: number): number {
  const idf = Math.log((entries - hits + 0.5) / (hits + 0.5));
  return idf <= 0 ? flooredIdf : idf;
}

/**
 * True for a term in half the entries or more: the formula's idf is ≤ 0 there, and FTS5 floors
 * it to {@link flooredIdf}. Such a term adds at most 2.2e-6 to a score.
 */
export function isCommonTerm(entries: number, hits: number): boolean {
  return 2 * hits >= entries;
}

/**
 * What one term can add to any entry's score, strictly more than it ever does: the share tends
 * to it as the frequency grows, and never reaches it (b < 1 keeps the length term positive).
 */
export function bm25TermScoreBound(idf: number): number {
  return idf * (k1 + 1.0);
}

/**
 * One term's share of an entry's score: the term occurs `frequency` times in an entry of `length`
 * terms, where the average entry has `averageLength`.
 */
export function bm25TermScore(idf: number, frequency: number, length: number, averageLength: number): number {
  return idf * ((frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + (b * length) / averageLength)));
}
