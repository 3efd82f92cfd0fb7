import { ConfigurationError } from '../errors/reins-error.js';
import { bm25Idf, bm25TermScore } from './bm25.js';
import { topRanked } from './top-ranked.js';
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
import { transcriptTerms } from './transcript-terms.js';

export interface MemoryTranscriptIndexOptions {
  /**
   * Characters of an entry's text that are indexed (from its start); the whole text is stored
   * and returned. Bounds what one huge tool result costs to append.
   * @default 20_000
   */
  maxIndexedChars?: number;
  /**
   * Postings read per query term: a term in more entries than this (a tool's name, in every step)
   * has its newest ones read, so a search every step costs the same at step 2,000 as at step 200.
   * Such a term's BM25 weight is near zero, and recency breaks ties; SQLite's FTS5 reads them all.
   * @default 256
   */
  maxPostingsPerTerm?: number;
}

/** A {@link TranscriptIndex} whose methods return at once. */
export interface MemoryTranscriptIndex extends TranscriptIndex {
  append(entries: readonly TranscriptEntry[]): void;
  search(query: string, options: TranscriptSearch): TranscriptHit[];
  get(id: string): TranscriptEntry | undefined;
  size(): number;
}

/** Where one term occurs: entry positions, ascending, and how often it occurs in each. */
interface Postings {
  positions: number[];
  frequencies: number[];
}

/**
 * A {@link TranscriptIndex} in memory: no dependency, runs in a browser, for tests and for runs
 * that do not outlive their process. An inverted index ranked by BM25 as FTS5 ranks it
 * (k1 = 1.2, b = 0.75, the same terms as `sqliteTranscriptIndex`), so moving a run to SQLite
 * changes neither its hits nor their order.
 * - `append` costs the entry's length; ids already present are skipped.
 * - `search` costs the postings of the query's terms (and sorts only the k it keeps), never a
 *   pass over every entry. Equal scores rank the later step first, then the later append.
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
  const maxPostingsPerTerm = options.maxPostingsPerTerm ?? 256;
  if (!Number.isInteger(maxPostingsPerTerm) || maxPostingsPerTerm < 1)
    throw new ConfigurationError('maxPostingsPerTerm', 'must be an integer ≥ 1');
  const entries: TranscriptEntry[] = [];
  /** Terms indexed per entry (BM25's document length). */
  const lengths: number[] = [];
  const positionsById = new Map<string, number>();
  const postingsByTerm = new Map<string, Postings>();
  let totalLength = 0;
  const scores = scoreBoard();
  /** One entry's term counts, reused from entry to entry. */
  const termCounts = new Map<string, number>();

  const add = (entry: TranscriptEntry): void => {
    const position = entries.length;
    positionsById.set(entry.id, position);
    entries.push(copyEntry(entry));
    const terms = transcriptTerms(indexedText(entry.text, maxIndexedChars));
    lengths.push(terms.length);
    totalLength += terms.length;
    const frequencies = termCounts;
    frequencies.clear();
    for (const term of terms) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    for (const [term, frequency] of frequencies) {
      let postings = postingsByTerm.get(term);
      if (!postings) {
        postings = { positions: [], frequencies: [] };
        postingsByTerm.set(term, postings);
      }
      postings.positions.push(position);
      postings.frequencies.push(frequency);
    }
  };

  /** Sums each matching entry's score, term by term in query order, as FTS5 does. */
  const score = (terms: readonly string[]): void => {
    scores.reset(entries.length);
    const averageLength = totalLength / entries.length;
    for (const term of terms) {
      const postings = postingsByTerm.get(term);
      if (!postings) continue;
      const idf = bm25Idf(entries.length, postings.positions.length);
      const { positions, frequencies } = postings;
      // A term in most entries (a tool's name) weighs next to nothing; read its newest postings only,
      // so a search every step stays bounded as the run grows (recency breaks ties anyway).
      const from = Math.max(0, positions.length - maxPostingsPerTerm);
      for (let i = from; i < positions.length; i++) {
        const position = positions[i] as number;
        scores.add(
          position,
          bm25TermScore(idf, frequencies[i] as number, lengths[position] as number, averageLength),
        );
      }
    }
  };

  const ranksBefore = (a: number, b: number): boolean => {
    const scoreA = scores.of(a);
    const scoreB = scores.of(b);
    if (scoreA !== scoreB) return scoreA > scoreB;
    const stepA = (entries[a] as TranscriptEntry).step;
    const stepB = (entries[b] as TranscriptEntry).step;
    return stepA !== stepB ? stepA > stepB : a > b;
  };

  return {
    append(batch) {
      checkTranscriptEntries(batch);
      for (const entry of batch) if (!positionsById.has(entry.id)) add(entry);
    },
    search(query, search) {
      checkTranscriptSearch(search);
      const terms = queryTerms(query);
      if (search.k === 0 || terms.length === 0 || entries.length === 0) return [];
      score(terms);
      const { kinds, beforeStep } = search;
      const candidates = scores.touched.filter((position) => {
        const entry = entries[position] as TranscriptEntry;
        return (
          (!kinds || kinds.includes(entry.kind)) && (beforeStep === undefined || entry.step < beforeStep)
        );
      });
      return topRanked(candidates, search.k, ranksBefore).map((position) => ({
        ...(entries[position] as TranscriptEntry),
        score: scores.of(position),
      }));
    },
    get(id) {
      const position = positionsById.get(id);
      return position === undefined ? undefined : { ...(entries[position] as TranscriptEntry) };
    },
    size() {
      return entries.length;
    },
  };
}

/**
 * Scores of the entries one search touched, in arrays kept across searches (grown by doubling as
 * the index grows), so a search pays for the postings it reads and never for clearing or
 * allocating one slot per entry: a slot counts only when its stamp is the current search's.
 */
function scoreBoard() {
  let values = new Float64Array(0);
  let stamps = new Uint32Array(0);
  let stamp = 0;
  const touched: number[] = [];
  return {
    touched,
    reset(entries: number): void {
      touched.length = 0;
      if (entries > values.length) {
        const capacity = Math.max(entries, 2 * values.length, 64);
        values = new Float64Array(capacity);
        stamps = new Uint32Array(capacity);
        stamp = 0;
      }
      if (stamp === 0xffff_ffff) {
        stamps.fill(0);
        stamp = 0;
      }
      stamp++;
    },
    add(position: number, value: number): void {
      if (stamps[position] === stamp) {
        values[position] = (values[position] as number) + value;
      } else {
        stamps[position] = stamp;
        values[position] = value;
        touched.push(position);
      }
    },
    of(position: number): number {
      return values[position] as number;
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
