import { describe, expect, it } from 'vitest';
import { transcriptTerms } from './transcript-terms.js';

// Agreement with SQLite FTS5 itself, code point by code point, is checked in
// src/sqlite/sqlite-transcript-index.test.ts; these are the cases a reader should know.
describe('transcriptTerms', () => {
  it('splits on anything but letters and numbers, and keeps the numbers', () => {
    expect(transcriptTerms('INC-4471: payments-api returned 503 (v2.14.1) foo_bar')).toEqual([
      'inc',
      '4471',
      'payments',
      'api',
      'returned',
      '503',
      'v2',
      '14',
      '1',
      'foo',
      'bar',
    ]);
    expect(transcriptTerms('')).toEqual([]);
    expect(transcriptTerms(' -- "*" (NEAR) \u0000 ')).toEqual(['near']);
  });

  it('folds case and takes diacritics off Latin letters, precomposed or not', () => {
    expect(transcriptTerms('Café CAFÉ cafe\u0301 Zürich ǖ Việt İstanbul')).toEqual([
      'cafe',
      'cafe',
      'cafe',
      'zurich',
      'u',
      'viet',
      'istanbul',
    ]);
  });

  it('leaves what FTS5 leaves: Greek and Cyrillic accents, ß, ø and ł, the dotless ı', () => {
    expect(transcriptTerms('Ελληνικά ёлка straße Øre Łódź ılık')).toEqual([
      'ελληνικά',
      'ёлка',
      'straße',
      'øre',
      'łodz',
      'ılık',
    ]);
  });

  it('folds as case folding does, not as lower-casing: final sigma, micro sign, long s', () => {
    expect(transcriptTerms('ΟΔΟΣ οδος µs ſtop')).toEqual(['οδοσ', 'οδοσ', 'μs', 'stop']);
  });

  it('keeps a run of CJK or Hangul as one term, as unicode61 does', () => {
    expect(transcriptTerms('日本語テキスト 한국어')).toEqual(['日本語テキスト', '한국어']);
  });

  it('gives every occurrence', () => {
    expect(transcriptTerms('retry, retry, Retry')).toEqual(['retry', 'retry', 'retry']);
  });
});
