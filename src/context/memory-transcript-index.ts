import { rankPostings } from './rank-postings.js';
import { ScoreBoard } from './score-board.js';
import type {
  TranscriptEntry,
  TranscriptHit,
  TranscriptIndex,
  TranscriptSearch,
} from './transcript-index.js';
import {
  checkMaxIndexedChars,
  checkTranscriptEntries,
  checkTranscriptSearch,
  indexedText,
  queryTerms,
} from './transcript-index-options.js';
import { TranscriptPostings } from './transcript-postings.js';
import { transcriptTerms } from './transcript-terms.js';

export interface MemoryTranscriptIndexOptions {
  /**
   * Characters of an entry's text that are indexed (from its start); the whole text is stored
   * and returned. Bounds what one huge tool result costs to append.
   * @default 20_000
   */
  maxIndexedChars?: number;
}

/** A {@link TranscriptIndex} whose methods return at once. */
export interface MemoryTranscriptIndex extends TranscriptIndex {
  append(entries: readonly TranscriptEntry[]): void;
  search(query: string, options: TranscriptSearch): TranscriptHit[];
  get(id: string): TranscriptEntry | undefined;
  size(): number;
  /** The share of entries holding `term` (a term as {@link transcriptTerms} reads it), 0 to 1. */
  termShare(term: string): number;
}

/**
 * A {@link TranscriptIndex} in memory: no dependency, runs in a browser, for tests and for runs
 * that do not outlive their process. An inverted index ranked by BM25 as FTS5 ranks it
 * (k1 = 1.2, b = 0.75, the same terms as `sqliteTranscriptIndex`), so moving a run to SQLite
 * changes neither its hits nor their order.
 * - `append` costs the entry's length; ids already present are skipped.
 * - `search` costs the postings of the query's terms at most, never a pass over every entry, and
 *   sorts only the k it keeps: terms are read rarest first, and common words' long postings are
 *   left unread when they cannot change the top k ({@link rankPostings}). Equal scores rank the
 *   later step first, then the later append.
 *
 * @example
 * ```ts
 * const index = memoryTranscriptIndex();
 * index.append([
 *   { id: 'm2.b0.result', step: 2, kind: 'tool_result', tool: 'deploy', text: 'INC-4471: rollback of payments-api failed' },
 *   { id: 'm3.decision', step: 3, kind: 'decision', text: 'Page the payments on-call before retrying' },
 * ]);
 * index.search('why did the rollback fail?', { k: 5, beforeStep: 4 }); // [{ id: 'm2.b0.result', score, … }]
 * ```
 */
export function memoryTranscriptIndex(options: MemoryTranscriptIndexOptions = {}): MemoryTranscriptIndex {
  const maxIndexedChars = checkMaxIndexedChars(options.maxIndexedChars);
  const index = new TranscriptPostings();
  const positionsById = new Map<string, number>();
  const board = new ScoreBoard();

  return {
    append(batch) {
      checkTranscriptEntries(batch);
      for (const entry of batch) {
        if (positionsById.has(entry.id)) continue;
        positionsById.set(entry.id, index.entries.length);
        index.add(copyEntry(entry), indexedText(entry.text, maxIndexedChars));
      }
    },
    termShare(term) {
      const entries = index.entries.length;
      return entries === 0 ? 0 : (index.byTerm.get(term)?.count ?? 0) / entries;
    },
    search(query, search) {
      checkTranscriptSearch(search);
      const terms = queryTerms(query);
      if (search.k === 0 || terms.length === 0 || index.entries.length === 0) return [];
      return rankPostings(index, terms, search, board).map((position) => ({
        ...copyEntry(index.entries[position]!),
        score: board.values[position]!,
      }));
    },
    get(id) {
      const position = positionsById.get(id);
      return position === undefined ? undefined : copyEntry(index.entries[position]!);
    },
    size() {
      return index.entries.length;
    },
  };
}

/** The entry's own fields only, optional ones when present (the index keeps no caller's object). */
function copyEntry(entry: TranscriptEntry): TranscriptEntry {
  const copy: TranscriptEntry = { id: entry.id, step: entry.step, kind: entry.kind, text: entry.text };
  if (entry.tool !== undefined) copy.tool = entry.tool;
  if (entry.message !== undefined) copy.message = entry.message;
  if (entry.untrusted !== undefined) copy.untrusted = entry.untrusted;
  return copy;
}
