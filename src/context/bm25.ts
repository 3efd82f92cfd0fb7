/**
 * BM25 exactly as SQLite FTS5's `bm25()` computes it (fts5_aux.c), operation for operation, so
 * the memory index ranks as the SQLite one does and its scores equal `-bm25()` to the last bit
 * or two (Math.log and the C library's log may round differently).
 */
const k1 = 1.2;
const b = 0.75;

/**
 * A term's inverse document frequency among `entries` entries, `hits` of which hold it. FTS5
 * floors it at 1e-6: a term in more than half of the entries still counts, barely.
 */
export function bm25Idf(entries: number, hits: number): number {
  const idf = Math.log((entries - hits + 0.5) / (hits + 0.5));
  return idf <= 0 ? 1e-6 : idf;
}

/**
 * One term's share of an entry's score: the term occurs `frequency` times in an entry of `length`
 * terms, where the average entry has `averageLength`.
 */
export function bm25TermScore(idf: number, frequency: number, length: number, averageLength: number): number {
  return idf * ((frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + (b * length) / averageLength)));
}
