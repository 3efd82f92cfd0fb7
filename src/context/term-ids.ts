import { termHash } from './transcript-terms.js';

/**
 * Dense ids for the terms an index has read, looked up straight from the text: an ASCII term
 * already known costs one comparison with the term its hash points at, no string. Appending a 2,000-
 * character result reads ~330 terms, nearly all known; cutting each out of the text and
 * lower-casing it, then hashing that fresh string in a `Map`, was most of what indexing it cost.
 */
export class TermIds {
  /** Each id's term, as {@link transcriptTerms} reads it. */
  readonly terms: string[] = [];
  /** Each id's hash. */
  #hashes = new Int32Array(64);
  /** Open addressing, linear probing: id + 1, or 0 for an empty slot; at most half full. */
  #slots = new Int32Array(128);

  /**
   * The id of the term `text.slice(start, end).toLowerCase()` (ASCII letters and digits), new or
   * not; `hash` is its {@link termHash} and `bytes` the text's bytes when it was read from them,
   * as {@link readTerms} hands them on.
   */
  ofAscii(text: string, start: number, end: number, hash: number, bytes: Uint8Array | undefined): number {
    const length = end - start;
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = slots[slot]! - 1;
      if (id < 0) return this.#add(text.slice(start, end).toLowerCase(), hash, slot);
      if (this.#hashes[id] !== hash) continue;
      const term = this.terms[id]!;
      if (term.length !== length) continue;
      let at = 0;
      // A typed array reads faster than charCodeAt on a sliced string (what a result's head is).
      if (bytes) while (at < length && term.charCodeAt(at) === lowerAscii(bytes[start + at]!)) at++;
      else while (at < length && term.charCodeAt(at) === lowerAscii(text.charCodeAt(start + at))) at++;
      if (at === length) return id;
    }
  }

  /** The id of `term` (a term as {@link transcriptTerms} reads it), new or not. */
  of(term: string): number {
    const hash = termHash(term);
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = slots[slot]! - 1;
      if (id < 0) return this.#add(term, hash, slot);
      if (this.#hashes[id] === hash && this.terms[id] === term) return id;
    }
  }

  #add(term: string, hash: number, slot: number): number {
    const id = this.terms.length;
    this.terms.push(term);
    if (id === this.#hashes.length) {
      const hashes = new Int32Array(2 * id);
      hashes.set(this.#hashes);
      this.#hashes = hashes;
    }
    this.#hashes[id] = hash;
    this.#slots[slot] = id + 1;
    if (2 * this.terms.length > this.#slots.length) this.#rehash();
    return id;
  }

  #rehash(): void {
    const slots = new Int32Array(2 * this.#slots.length);
    const mask = slots.length - 1;
    for (let id = 0; id < this.terms.length; id++) {
      let slot = this.#hashes[id]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.#slots = slots;
  }
}

function lowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}
