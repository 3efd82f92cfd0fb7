import type BetterSqlite3 from 'better-sqlite3';
import type {
  TranscriptEntry,
  TranscriptEntryKind,
  TranscriptHit,
  TranscriptIndex,
  TranscriptSearch,
} from '../context/transcript-index.js';
import {
  checkMaxIndexedChars,
  checkTranscriptEntries,
  checkTranscriptSearch,
  indexedText,
  queryTerms,
} from '../context/transcript-index-options.js';
import { transcriptTerms } from '../context/transcript-terms.js';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import { fts5Statistics } from './fts5-statistics.js';
import { openDatabase } from './open-database.js';
import { type Fts5Ranking, type RankedRow, rankFts5 } from './rank-fts5.js';

export interface SqliteTranscriptIndexOptions {
  /** The run whose entries this index appends and searches; other runs in the file stay invisible. */
  runId: string;
  /** The entries table; the FTS5 table beside it is `<table>_fts`. @default 'reins_transcript' */
  table?: string;
  /**
   * Characters of an entry's text that are indexed (from its start); the whole text is stored
   * and returned. Give the memory index the same value to get the same hits.
   * @default 20_000
   */
  maxIndexedChars?: number;
}

/** A {@link TranscriptIndex} whose methods return at once, and that holds a database. */
export interface SqliteTranscriptIndex extends TranscriptIndex {
  append(entries: readonly TranscriptEntry[]): void;
  search(query: string, options: TranscriptSearch): TranscriptHit[];
  get(id: string): TranscriptEntry | undefined;
  size(): number;
  /** Closes the database if the index opened it (from a path); an adopted one stays open. */
  close(): void;
}

interface EntryRow {
  id: string;
  step: number;
  kind: TranscriptEntryKind;
  text: string;
  tool: string | null;
  message: number | null;
  untrusted: number | null;
}

interface SearchParameters {
  match: string;
  runId: string;
  kinds: string | null;
  beforeStep: number | null;
  limit: number;
}

/**
 * The transcript index in SQLite (better-sqlite3 12), the embedded default under the
 * {@link TranscriptIndex} contract: a FTS5 table (`unicode61 remove_diacritics 2`, contentless)
 * beside a table of entries keyed by (run, id), in one file several runs can share.
 * - `append` writes a batch in one transaction; an id the run already has is ignored
 *   (`INSERT OR IGNORE`), so a resumed run re-appending its transcript duplicates nothing.
 * - `search` never hands the query to FTS5's query language (a model writes it): it splits it
 *   into terms as {@link transcriptTerms} does and matches any of them, each a quoted string, so
 *   `NEAR(`, `"`, `*`, `text:` or `OR` are words like any other. Ranked by FTS5's `bm25()` (the
 *   rare terms scored by FTS5, the common words' floored shares added after: {@link rankFts5}),
 *   then the later step, then the later append: the hits, order and scores of the memory index
 *   when the file holds one run (BM25's statistics count every run in the file). Its cost is
 *   FTS5's per matched row; the prepared statements are made once, at open.
 * - Throws `ReinsError('fts5_unavailable')` on open when the SQLite build lacks FTS5.
 *
 * @example
 * ```ts
 * const index = sqliteTranscriptIndex('runs.db', { runId: 'run-42' });
 * index.append([{ id: 'm3.b0.result', step: 3, kind: 'tool_result', text: 'INC-4471: rollback failed' }]);
 * index.search('inc-4471 rollback', { k: 5, beforeStep: 10 });
 * index.close();
 * ```
 */
export function sqliteTranscriptIndex(
  database: string | BetterSqlite3.Database,
  options: SqliteTranscriptIndexOptions,
): SqliteTranscriptIndex {
  if (typeof options.runId !== 'string' || options.runId === '')
    throw new ConfigurationError('runId', 'must be a non-empty string');
  const runId = options.runId;
  const maxIndexedChars = checkMaxIndexedChars(options.maxIndexedChars);
  const opened = openDatabase(
    { database, ...(options.table !== undefined ? { table: options.table } : {}) },
    'reins_transcript',
  );
  const { db, table } = opened;
  const fts = `${table}_fts`;
  try {
    // A database the caller opened keeps its own settings; one opened here waits for writers.
    if (opened.owned) db.pragma('busy_timeout = 5000');
    assertFts5(db);
    createTables(db, table, fts);
  } catch (error) {
    if (opened.owned) db.close();
    throw error;
  }

  const insertEntry = db.prepare<
    [string, string, number, string, string, string | null, number | null, number | null]
  >(
    `INSERT OR IGNORE INTO ${table} (run_id, id, step, kind, text, tool, message, untrusted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertText = db.prepare<[number | bigint, string]>(`INSERT INTO ${fts} (rowid, text) VALUES (?, ?)`);
  const selectEntry = db.prepare<[string, string], EntryRow>(
    `SELECT id, step, kind, text, tool, message, untrusted FROM ${table} WHERE run_id = ? AND id = ?`,
  );
  const countEntries = db.prepare<[string], { count: number }>(
    `SELECT count(*) AS count FROM ${table} WHERE run_id = ?`,
  );
  // CROSS JOIN keeps FTS5 the outer loop: the cost is the query terms' postings, never a scan of
  // the run's entries with a MATCH tried on each. Only the sort keys are selected: the text sits
  // in overflow pages the sorter would copy for every row matched. Kinds come as ',fact,decision,'
  // (one statement for every filter).
  const matchRows = db.prepare<[SearchParameters], RankedRow>(
    `SELECT e.seq, e.step, bm25(${fts}) AS relevance
       FROM ${fts} CROSS JOIN ${table} AS e ON e.seq = ${fts}.rowid
      WHERE ${fts} MATCH @match AND e.run_id = @runId
        AND (@kinds IS NULL OR instr(@kinds, ',' || e.kind || ',') > 0)
        AND (@beforeStep IS NULL OR e.step < @beforeStep)
      ORDER BY relevance, e.step DESC, e.seq DESC
      LIMIT @limit`,
  );
  const selectBySeq = db.prepare<[number], EntryRow>(
    `SELECT id, step, kind, text, tool, message, untrusted FROM ${table} WHERE seq = ?`,
  );
  const textBySeq = db.prepare<[number], { text: string }>(`SELECT text FROM ${table} WHERE seq = ?`);
  const statistics = fts5Statistics(db, fts);
  /** Appends the entries the run does not have yet; returns the indexed texts of those it added. */
  const appendBatch = db.transaction((entries: readonly TranscriptEntry[]) => {
    const added: string[] = [];
    for (const entry of entries) {
      const inserted = insertEntry.run(
        runId,
        entry.id,
        entry.step,
        entry.kind,
        entry.text,
        entry.tool ?? null,
        entry.message ?? null,
        entry.untrusted === undefined ? null : entry.untrusted ? 1 : 0,
      );
      if (inserted.changes === 1) {
        const indexed = indexedText(entry.text, maxIndexedChars);
        insertText.run(inserted.lastInsertRowid, indexed);
        added.push(indexed);
      }
    }
    return added;
  });

  // One read transaction: the counts, the matches and the rows come from one snapshot.
  const searchIn = db.transaction((terms: readonly string[], search: TranscriptSearch): TranscriptHit[] => {
    const filters = {
      runId,
      kinds: search.kinds ? `,${search.kinds.join(',')},` : null,
      beforeStep: search.beforeStep ?? null,
    };
    const ranking: Fts5Ranking = {
      statistics,
      match: (matched, limit) =>
        matchRows.all({
          ...filters,
          match: matched.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR '),
          limit,
        }),
      indexedTerms: (seq) => transcriptTerms(indexedText(textBySeq.get(seq)?.text ?? '', maxIndexedChars)),
    };
    return rankFts5(ranking, terms, search.k).map(({ row, score }) => ({
      ...entryOf(selectBySeq.get(row.seq)!),
      score,
    }));
  });

  return {
    append(entries) {
      checkTranscriptEntries(entries);
      if (entries.length === 0) return;
      // Counted once committed: a batch that throws added nothing.
      for (const text of appendBatch.immediate(entries))
        statistics.added(() => new Set(transcriptTerms(text)));
    },
    search(query, search) {
      checkTranscriptSearch(search);
      const terms = queryTerms(query);
      if (search.k === 0 || terms.length === 0 || search.kinds?.length === 0) return [];
      return searchIn.deferred(terms, search);
    },
    get(id) {
      const row = selectEntry.get(runId, id);
      return row && entryOf(row);
    },
    size() {
      return countEntries.get(runId)?.count ?? 0;
    },
    close() {
      if (opened.owned) db.close();
    },
  };
}

/** Throws `fts5_unavailable` unless the connection's SQLite has FTS5 compiled in or loaded. */
function assertFts5(db: Pick<BetterSqlite3.Database, 'prepare'>): void {
  try {
    db.prepare('SELECT fts5_source_id()').get();
  } catch (cause) {
    throw new ReinsError(
      'fts5_unavailable',
      `sqliteTranscriptIndex needs SQLite's FTS5 full-text extension, which this SQLite build lacks (better-sqlite3 12's bundled SQLite has it; a custom build needs SQLITE_ENABLE_FTS5): ${String(cause)}`,
      { cause },
    );
  }
}

/** The entries table and, beside it, the FTS5 table over their indexed text. */
function createTables(db: BetterSqlite3.Database, table: string, fts: string): void {
  db.transaction(() => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL, id TEXT NOT NULL, step INTEGER NOT NULL,
        kind TEXT NOT NULL, text TEXT NOT NULL, tool TEXT, message INTEGER, untrusted INTEGER, UNIQUE (run_id, id))`,
    );
    // Contentless: the text lives once, in the entries table; the FTS5 rowid is the entry's seq.
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2')`,
    );
  }).immediate();
}

function entryOf(row: EntryRow): TranscriptEntry {
  const entry: TranscriptEntry = { id: row.id, step: row.step, kind: row.kind, text: row.text };
  if (row.tool !== null) entry.tool = row.tool;
  if (row.message !== null) entry.message = row.message;
  if (row.untrusted !== null) entry.untrusted = row.untrusted === 1;
  return entry;
}
