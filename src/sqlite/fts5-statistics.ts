import type BetterSqlite3 from 'better-sqlite3';

/**
 * What FTS5's `bm25()` reads about a table, read where it reads it: the row and token counts from
 * the averages record (`<fts>_data`, id 1), a row's length from `<fts>_docsize`, and a term's row
 * count from an `fts5vocab` table (a temp one, on this connection).
 */
export interface Fts5Statistics {
  /** Rows in the table and tokens in its one column. */
  totals(): { rows: number; tokens: number };
  /** Tokens in the row with this rowid. */
  rowLength(rowid: number): number;
  /** Rows holding `term` (FTS5's nHit for a one-term phrase), as of the last `totals()`. */
  rowsWith(term: string): number;
  /** Counts one row this connection committed; `terms` gives its distinct terms, if they are needed. */
  added(terms: () => ReadonlySet<string>): void;
}

/** Term counts kept between searches: a common word's count costs a pass over its whole doclist. */
const maxCachedTerms = 4_096;

export function fts5Statistics(db: BetterSqlite3.Database, fts: string): Fts5Statistics {
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${fts}_vocab USING fts5vocab(main, ${fts}, 'row')`);
  const averages = db.prepare<[], { block: Buffer }>(`SELECT block FROM ${fts}_data WHERE id = 1`);
  const docsize = db.prepare<[number], { sz: Buffer }>(`SELECT sz FROM ${fts}_docsize WHERE id = ?`);
  const vocab = db.prepare<[string], { doc: number }>(`SELECT doc FROM temp.${fts}_vocab WHERE term = ?`);
  // Counts are valid for `countedRows` rows: this connection's own appends keep them current; a
  // row count that moved otherwise (another connection appended) drops them all.
  const counts = new Map<string, number>();
  let countedRows = -1;
  return {
    totals() {
      const block = averages.get()?.block;
      const rows = block ? readVarint(block, 0) : { value: 0, next: 0 };
      const tokens = block ? readVarint(block, rows.next).value : 0;
      if (rows.value !== countedRows) {
        counts.clear();
        countedRows = rows.value;
      }
      return { rows: rows.value, tokens };
    },
    rowLength(rowid) {
      const sz = docsize.get(rowid)?.sz;
      return sz ? readVarint(sz, 0).value : 0;
    },
    rowsWith(term) {
      let count = counts.get(term);
      if (count === undefined) {
        count = vocab.get(term)?.doc ?? 0;
        if (counts.size >= maxCachedTerms) counts.clear();
        counts.set(term, count);
      }
      return count;
    },
    added(terms) {
      if (countedRows < 0) return;
      countedRows++;
      if (counts.size === 0) return;
      for (const term of terms()) {
        const count = counts.get(term);
        if (count !== undefined) counts.set(term, count + 1);
      }
    },
  };
}

/**
 * SQLite's varint (FTS5 writes its records with it): big-endian groups of 7 bits, the high bit
 * set on every byte but the last, and a ninth byte, if reached, with all 8 bits.
 */
export function readVarint(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[offset + i] ?? 0;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return { value: value * 256 + (bytes[offset + 8] ?? 0), next: offset + 9 };
}
