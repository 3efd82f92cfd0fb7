import { TermIds } from './term-ids.js';
import type { TranscriptEntry, TranscriptEntryKind } from './transcript-index.js';
import { readTerms, type TermSink } from './transcript-terms.js';

/**
 * Where one term occurs: entry positions, ascending, and how often it occurs in each, packed as
 * `data[offset + 2i]` (the position) and `data[offset + 2i + 1]` (the frequency) for i < `count`.
 * A long list has a typed array of its own, grown by doubling: it lives outside the collected
 * heap, so appending to it is not copied by every young-generation collection (an array of numbers
 * was, growth and all). A new term's first postings share a slab with other new terms' (most terms,
 * an id or a step number, stay that short; a typed array each would cost more than it holds).
 */
export interface Postings {
  data: Int32Array;
  offset: number;
  count: number;
  /** Postings `data` has room for from `offset`. */
  capacity: number;
}

/** Postings for a term first met in this entry: room for a few entries before the first growth. */
const initialPostings = 2;
/** Terms whose first postings share one slab: a small index takes a small slab, a big one up to the most. */
const firstSlabTerms = 64;
const mostSlabTerms = 4_096;

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
  /**
   * The entry being added: how often each term id occurs in it (0 for the others, reset as the
   * entry is posted), its distinct ids in the order first met, and its length so far. An
   * occurrence costs a counter; each distinct term is posted once, at the end.
   */
  #counts = new Int32Array(256);
  #met = new Int32Array(64);
  #metCount = 0;
  /** Where new terms' first postings go, and how much of it is taken. */
  #slab = new Int32Array(0);
  #slabUsed = 0;
  #length = 0;
  readonly #sink: TermSink = {
    asciiTerm: (text, start, end, hash, bytes) =>
      this.#count(this.#termIds.ofAscii(text, start, end, hash, bytes)),
    term: (term) => this.#count(this.#termIds.of(term)),
  };

  /** Adds `entry`, whose indexed text is `text` (read as {@link transcriptTerms} reads it), at the next position. */
  add(entry: TranscriptEntry, text: string): void {
    const position = this.entries.length;
    this.entries.push(entry);
    this.steps.push(entry.step);
    this.kinds.push(entry.kind);
    this.#length = 0;
    this.#metCount = 0;
    readTerms(text, this.#sink);
    const counts = this.#counts;
    const met = this.#met;
    for (let i = 0; i < this.#metCount; i++) {
      const id = met[i]!;
      const frequency = counts[id]!;
      counts[id] = 0;
      let postings = this.#postingsById[id];
      if (postings === undefined) {
        // A new term: ids are handed out in order, and an entry's new ids are met in that order.
        postings = this.#newPostings();
        this.#postingsById[id] = postings;
        this.byTerm.set(this.#termIds.terms[id]!, postings);
      } else if (postings.count === postings.capacity) {
        const capacity = 2 * postings.capacity;
        const grown = new Int32Array(2 * capacity);
        grown.set(postings.data.subarray(postings.offset, postings.offset + 2 * postings.count));
        postings.data = grown;
        postings.offset = 0;
        postings.capacity = capacity;
      }
      const at = postings.offset + 2 * postings.count;
      postings.data[at] = position;
      postings.data[at + 1] = frequency;
      postings.count++;
    }
    this.lengths.push(this.#length);
    this.totalLength += this.#length;
  }

  #newPostings(): Postings {
    const size = 2 * initialPostings;
    if (this.#slabUsed + size > this.#slab.length) {
      const terms = Math.min(mostSlabTerms, Math.max(firstSlabTerms, (2 * this.#slab.length) / size));
      this.#slab = new Int32Array(terms * size);
      this.#slabUsed = 0;
    }
    const offset = this.#slabUsed;
    this.#slabUsed += size;
    return { data: this.#slab, offset, count: 0, capacity: initialPostings };
  }

  #count(id: number): void {
    this.#length++;
    let counts = this.#counts;
    if (id >= counts.length) {
      const grown = new Int32Array(2 * Math.max(id + 1, counts.length));
      grown.set(counts);
      this.#counts = counts = grown;
    }
    if (counts[id]!++ !== 0) return;
    let met = this.#met;
    if (this.#metCount === met.length) {
      const grown = new Int32Array(2 * met.length);
      grown.set(met);
      this.#met = met = grown;
    }
    met[this.#metCount++] = id;
  }
}

/** How often the term occurs in the entry at `position` (a binary search), 0 when not at all. */
export function frequencyAt(postings: Postings, position: number): number {
  const { data, offset } = postings;
  let low = 0;
  let high = postings.count - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const found = data[offset + 2 * middle] as number;
    if (found === position) return data[offset + 2 * middle + 1] as number;
    if (found < position) low = middle + 1;
    else high = middle - 1;
  }
  return 0;
}
