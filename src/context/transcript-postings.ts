import { TermIds } from './term-ids.js';
import type { TranscriptEntry, TranscriptEntryKind } from './transcript-index.js';
import { readTerms, type TermSink } from './transcript-terms.js';

/** Where one term occurs: entry positions, ascending, and how often it occurs in each. */
export interface Postings {
  positions: number[];
  frequencies: number[];
}

/**
 * The memory index's data: the entries in append order (an entry's position is its index here),
 * what ranking reads of each in plain arrays beside them (no entry object is touched while
 * scoring), and each term's postings. Append only.
 */
export class TranscriptPostings {
  readonly entries: TranscriptEntry[] = [];
  readonly steps: number[] = [];
  readonly kinds: TranscriptEntryKind[] = [];
  /** Terms indexed per entry: BM25's document length. */
  readonly lengths: number[] = [];
  readonly byTerm = new Map<string, Postings>();
  /** Terms indexed over all entries. */
  totalLength = 0;
  readonly #termIds = new TermIds();
  /** `byTerm`'s values by term id: what appending looks up. */
  readonly #postingsById: Postings[] = [];
  /** The entry being added, and how many terms it has had so far. */
  #position = 0;
  #length = 0;
  readonly #sink: TermSink = {
    asciiTerm: (text, start, end, hash, bytes) =>
      this.#post(this.#termIds.ofAscii(text, start, end, hash, bytes)),
    term: (term) => this.#post(this.#termIds.of(term)),
  };

  /** Adds `entry`, whose indexed text is `text` (read as {@link transcriptTerms} reads it), at the next position. */
  add(entry: TranscriptEntry, text: string): void {
    const position = this.entries.length;
    this.entries.push(entry);
    this.steps.push(entry.step);
    this.kinds.push(entry.kind);
    this.#position = position;
    this.#length = 0;
    readTerms(text, this.#sink);
    this.lengths.push(this.#length);
    this.totalLength += this.#length;
  }

  #post(id: number): void {
    this.#length++;
    const position = this.#position;
    const postings = this.#postingsById[id];
    if (postings === undefined) {
      // A new term: ids are handed out in order, and each is posted as soon as it is made.
      const created = { positions: [position], frequencies: [1] };
      this.#postingsById.push(created);
      this.byTerm.set(this.#termIds.terms[id]!, created);
      return;
    }
    // This entry's positions come last: a repeated term counts up its last posting.
    const last = postings.positions.length - 1;
    if (postings.positions[last] === position) postings.frequencies[last]!++;
    else {
      postings.positions.push(position);
      postings.frequencies.push(1);
    }
  }
}

/** How often the term occurs in the entry at `position` (a binary search), 0 when not at all. */
export function frequencyAt(postings: Postings, position: number): number {
  const { positions } = postings;
  let low = 0;
  let high = positions.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const found = positions[middle] as number;
    if (found === position) return postings.frequencies[middle] as number;
    if (found < position) low = middle + 1;
    else high = middle - 1;
  }
  return 0;
}
