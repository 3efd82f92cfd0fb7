import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import { memoryTranscriptIndex } from './memory-transcript-index.js';
import type { TranscriptEntry, TranscriptEntryKind, TranscriptHit } from './transcript-index.js';
import { transcriptTerms } from './transcript-terms.js';

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

  it('ranks as scoring every entry by the formula would, common terms skipped or not', () => {
    // A brute-force reference: every entry, every query term in query order, FTS5's arithmetic.
    const reference = (list: TranscriptEntry[], query: string, k: number, kinds?: TranscriptEntryKind[]) => {
      const stored = list.filter((item, i) => list.findIndex((other) => other.id === item.id) === i);
      const texts = stored.map((item) => transcriptTerms(item.text));
      const average = texts.reduce((sum, terms) => sum + terms.length, 0) / stored.length;
      // Summed as both indexes sum: terms in fewer than half the entries first, then the others.
      const hitsOf = (term: string) => texts.filter((text) => text.includes(term)).length;
      const distinct = [...new Set(transcriptTerms(query))];
      const common = (term: string) => 2 * hitsOf(term) >= stored.length;
      const terms = [...distinct.filter((term) => !common(term)), ...distinct.filter(common)];
      const idf = terms.map((term) => {
        const value = Math.log((stored.length - hitsOf(term) + 0.5) / (hitsOf(term) + 0.5));
        return value <= 0 ? 1e-6 : value;
      });
      const hits: TranscriptHit[] = [];
      for (const [i, item] of stored.entries()) {
        if (kinds && !kinds.includes(item.kind)) continue;
        const text = texts[i]!;
        let score = 0;
        for (const [j, term] of terms.entries()) {
          const frequency = text.filter((t) => t === term).length;
          if (frequency > 0)
            score +=
              idf[j]! * ((frequency * 2.2) / (frequency + 1.2 * (1 - 0.75 + (0.75 * text.length) / average)));
        }
        if (score > 0) hits.push({ ...item, score });
      }
      const order = (hit: TranscriptHit) => stored.findIndex((item) => item.id === hit.id);
      hits.sort((a, b) => b.score - a.score || b.step - a.step || order(b) - order(a));
      return hits.slice(0, k);
    };
    // Common words in most entries (floored idf, the postings skipped when they cannot matter), rarer ones in a few.
    const word = fc.oneof(
      { arbitrary: fc.constantFrom('the', 'error', 'a', 'of'), weight: 3 },
      {
        arbitrary: fc.constantFrom('timeout', 'disk', 'INC-4471', 'pod', 'retry', 'db-1', 'oom', 'dns'),
        weight: 1,
      },
    );
    const text = fc.array(word, { minLength: 1, maxLength: 12 }).map((list) => list.join(' '));
    const kinds: TranscriptEntryKind[] = ['fact', 'decision', 'tool_result'];
    fc.assert(
      fc.property(
        fc.array(fc.record({ step: fc.integer({ min: 1, max: 6 }), kind: fc.constantFrom(...kinds), text }), {
          minLength: 4,
          maxLength: 30,
        }),
        text,
        fc.integer({ min: 1, max: 5 }),
        fc.option(fc.subarray(kinds, { minLength: 1 }), { nil: undefined }),
        (items, query, k, only) => {
          const list = items.map((item, i): TranscriptEntry => ({ id: `e${i % 25}`, ...item }));
          const index = memoryTranscriptIndex();
          index.append(list);
          expect(index.search(query, { k, ...(only ? { kinds: only } : {}) })).toEqual(
            reference(list, query, k, only),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('indexes the terms transcriptTerms reads, however the text is written', () => {
    // The index reads ASCII terms straight from the text (no string per known term): it must
    // land on the terms, counts and lengths transcriptTerms gives, for any mix of scripts and case.
    const piece = fc.constantFrom(
      'Retry',
      'retry',
      'RETRY',
      'INC-4471',
      'db_1',
      'café',
      'CAFÉ',
      'cafe\u0301',
      'Zürich',
      'straße',
      'ΟΔΟΣ',
      'οδος',
      '日本語',
      '😀',
      'naïve…',
      'x',
      '4471',
      ' ',
      '-',
      '→',
    );
    const asciiPiece = fc.constantFrom('Retry', 'retry', 'RETRY', 'INC-4471', 'db_1', 'x', '4471', ' ', '-');
    // Long texts too: an all-ASCII one of 256 characters or more is read from its bytes.
    const text = fc
      .tuple(
        fc.oneof(fc.array(piece, { maxLength: 16 }), fc.array(asciiPiece, { maxLength: 16 })),
        fc.integer({ min: 1, max: 60 }),
      )
      .map(([list, times]) => list.join('').repeat(times));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 12 }), (texts) => {
        const index = memoryTranscriptIndex();
        index.append(texts.map((item, i) => entry(`e${i}`, i + 1, item)));
        const read = texts.map((item) => transcriptTerms(item));
        for (const term of new Set(read.flat())) {
          const holding = read.filter((terms) => terms.includes(term)).length;
          expect(index.termShare(term), term).toBe(holding / texts.length);
          // Found in exactly the entries that hold it.
          const hits = index.search(term, { k: texts.length });
          expect(hits.map((hit) => hit.id).sort()).toEqual(
            read.flatMap((terms, i) => (terms.includes(term) ? [`e${i}`] : [])).sort(),
          );
        }
      }),
      { numRuns: 300 },
    );
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
