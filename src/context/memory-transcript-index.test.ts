import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import { memoryTranscriptIndex } from './memory-transcript-index.js';
import type { TranscriptEntry } from './transcript-index.js';

// The contract both indexes honour is test/transcript-index-conformance.test.ts; here, what is
// particular to the memory index.
const entry = (id: string, step: number, text: string): TranscriptEntry => ({ id, step, kind: 'fact', text });

describe('memoryTranscriptIndex', () => {
  it('scores with BM25 as FTS5 does (k1 = 1.2, b = 0.75, idf floored at 1e-6)', () => {
    const index = memoryTranscriptIndex();
    index.append([
      entry('a', 1, 'disk full disk'),
      entry('b', 2, 'cpu high'),
      entry('c', 3, 'memory leak in worker'),
      entry('d', 4, 'network ok'),
      entry('e', 5, 'disk ok'),
    ]);
    // 5 entries, 13 terms: average length 2.6; "disk" is in 2 of them, "ok" in 2.
    const idf = Math.log((5 - 2 + 0.5) / (2 + 0.5));
    const share = (frequency: number, length: number) =>
      idf * ((frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * length) / 2.6)));
    const hits = index.search('disk ok', { k: 5 });
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ['e', share(1, 2) + share(1, 2)],
      ['a', share(2, 3)],
      ['d', share(1, 2)],
    ]);
  });

  it('scores each search afresh, however searches and appends interleave', () => {
    const texts = ['alpha beta', 'beta gamma', 'gamma delta alpha', 'delta', 'alpha alpha beta'];
    const queries = ['alpha', 'beta delta', 'gamma', 'alpha gamma delta', 'epsilon'];
    const grown = memoryTranscriptIndex();
    for (let round = 0; round < 40; round++) {
      grown.append([entry(`e${round}`, round, texts[round % texts.length] as string)]);
      const fresh = memoryTranscriptIndex();
      fresh.append(
        Array.from({ length: round + 1 }, (_, i) => entry(`e${i}`, i, texts[i % texts.length] as string)),
      );
      for (const query of queries)
        expect(grown.search(query, { k: 50 })).toEqual(fresh.search(query, { k: 50 }));
    }
  });

  it('refuses a maxIndexedChars that is not a positive integer', () => {
    for (const maxIndexedChars of [0, -1, 2.5, Number.NaN])
      expect(() => memoryTranscriptIndex({ maxIndexedChars }), String(maxIndexedChars)).toThrow(
        /maxIndexedChars/,
      );
    try {
      memoryTranscriptIndex({ maxIndexedChars: 0 });
    } catch (error) {
      expect(isConfigurationError(error)).toBe(true);
    }
  });
});
