/**
 * The transcript as something you query (the transcript cross-post): every completed step leaves
 * typed entries in an append-only index outside the window, and a step that needs the past asks
 * for the top k entries instead of carrying every digest in every prompt.
 *
 * Implementations: {@link memoryTranscriptIndex} (in this folder: the browser and tests) and
 * `sqliteTranscriptIndex` in `reins/sqlite` (FTS5, the embedded default). Both honour the contract
 * in `test/transcript-index-conformance.test.ts`, read text into the same terms
 * ({@link transcriptTerms}) and rank by the same BM25.
 */

/** What an entry records. Constraints and facts are load-bearing; tool results are the long tail. */
export type TranscriptEntryKind = 'decision' | 'dead_end' | 'fact' | 'constraint' | 'tool_result' | 'message';

/** One fact about the run, as the context policy recorded it from the transcript. */
export interface TranscriptEntry {
  /**
   * Stable id, unique within the run (`m12.b0.result`): appending an id already present is a no-op,
   * so a resumed run re-appending what it already wrote duplicates nothing.
   */
  id: string;
  /** The step that produced it (1-based, as the trace numbers steps). */
  step: number;
  kind: TranscriptEntryKind;
  /** The searchable text (the whole tool result for `tool_result`, the digest line otherwise). */
  text: string;
  /** The tool it concerns, when it concerns one. */
  tool?: string;
  /** The index of the transcript message it came from. */
  message?: number;
  /** True when the text holds tool output or other untrusted data (the taint guard's view). */
  untrusted?: boolean;
}

/** An entry a search found, with its relevance (higher is better; comparable only within one search). */
export interface TranscriptHit extends TranscriptEntry {
  score: number;
}

export interface TranscriptSearch {
  /** At most this many hits. */
  k: number;
  /** Only these kinds. @default every kind */
  kinds?: readonly TranscriptEntryKind[];
  /** Only entries from steps before this one. @default no bound */
  beforeStep?: number;
}

/**
 * An append-only, lexical index of one run's entries. `search` treats the query as plain words
 * (never as query syntax: a model writes it), matches entries sharing at least one term, ranks by
 * relevance with recency breaking ties, and returns at most `k`.
 */
export interface TranscriptIndex {
  append(entries: readonly TranscriptEntry[]): void | Promise<void>;
  search(
    query: string,
    options: TranscriptSearch,
  ): readonly TranscriptHit[] | Promise<readonly TranscriptHit[]>;
  /** The entry with this id, or undefined. */
  get(id: string): TranscriptEntry | undefined | Promise<TranscriptEntry | undefined>;
  /** How many entries it holds. */
  size(): number | Promise<number>;
}
