import { ConfigurationError } from '../errors/reins-error.js';
import type { TranscriptEntry, TranscriptSearch } from './transcript-index.js';
import { transcriptTerms } from './transcript-terms.js';

// What both TranscriptIndex implementations read the same way, so the memory and the SQLite
// index index the same text, split a query into the same terms and refuse the same searches.

/** Characters of an entry's text indexed by default: a 5 MB tool result costs no more than 20 KB of it. */
export const defaultMaxIndexedChars = 20_000;

/** The prefix of `text` an index reads (the whole text is stored). */
export function indexedText(text: string, maxIndexedChars: number): string {
  return text.length > maxIndexedChars ? text.slice(0, maxIndexedChars) : text;
}

/** `maxIndexedChars` as given, or the default; anything but a positive integer is a programmer error. */
export function checkMaxIndexedChars(value: number | undefined): number {
  if (value === undefined) return defaultMaxIndexedChars;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new ConfigurationError('maxIndexedChars', `must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * Throws for a batch holding an entry without a string id and text or a finite step, before any
 * of it is appended (a batch goes in whole or not at all).
 */
export function checkTranscriptEntries(entries: readonly TranscriptEntry[]): void {
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index];
    if (typeof entry?.id !== 'string' || typeof entry.text !== 'string' || !Number.isFinite(entry.step))
      throw new ConfigurationError(
        `entries[${index}]`,
        'an entry needs a string id, a string text and a finite step',
      );
  }
}

/** Throws for a `k` that is not a non-negative integer or a `beforeStep` that is not a number. */
export function checkTranscriptSearch(options: TranscriptSearch): void {
  if (!Number.isSafeInteger(options.k) || options.k < 0)
    throw new ConfigurationError('k', `must be a non-negative integer, got ${String(options.k)}`);
  if (options.beforeStep !== undefined && Number.isNaN(options.beforeStep))
    throw new ConfigurationError('beforeStep', 'must be a number, got NaN');
}

/**
 * The query's distinct terms, in the order they first occur: plain words, whatever the model
 * wrote, and the order both indexes sum a hit's score in (so the sums round the same way).
 */
export function queryTerms(query: string): string[] {
  return [...new Set(transcriptTerms(query))];
}

/**
 * The order both indexes sum a score's terms in: the terms in fewer than half the entries, then
 * the common ones ({@link isCommonTerm}), each group in query order. FTS5 sums a MATCH's phrases
 * in their order, so the SQLite index can score the rare terms in FTS5, add the common terms'
 * tiny shares after, and land on the bits the memory index computes.
 */
export function summationOrder<T>(terms: readonly T[], isCommon: (term: T) => boolean): T[] {
  return [...terms.filter((term) => !isCommon(term)), ...terms.filter(isCommon)];
}
