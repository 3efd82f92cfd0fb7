import type { TranscriptEntry, TranscriptEntryKind } from './transcript-index.js';

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

  /** Adds `entry`, whose indexed text reads as `terms`, at the next position. */
  add(entry: TranscriptEntry, terms: readonly string[]): void {
    const position = this.entries.length;
    this.entries.push(entry);
    this.steps.push(entry.step);
    this.kinds.push(entry.kind);
    this.lengths.push(terms.length);
    this.totalLength += terms.length;
    for (const term of terms) {
      const postings = this.byTerm.get(term);
      if (!postings) {
        this.byTerm.set(term, { positions: [position], frequencies: [1] });
        continue;
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
