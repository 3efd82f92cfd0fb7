import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  memoryTranscriptIndex,
  type TranscriptEntry,
  type TranscriptEntryKind,
  type TranscriptHit,
  type TranscriptIndex,
  transcriptTerms,
} from '../src/context/index.js';
import { isConfigurationError } from '../src/errors/reins-error.js';
import { sqliteTranscriptIndex } from '../src/sqlite/index.js';

// The TranscriptIndex contract, run against the memory index and the SQLite one (a fresh
// in-memory database per index, so BM25's statistics are the run's own). What only SQLite does
// (several runs in one file, reopening) is in src/sqlite/sqlite-transcript-index.test.ts.

type Open = (options?: { maxIndexedChars?: number }) => TranscriptIndex;
const indexes: [string, Open][] = [
  ['memory', (options) => memoryTranscriptIndex(options)],
  ['sqlite', (options) => sqliteTranscriptIndex(':memory:', { runId: 'run-1', ...options })],
];

const entry = (
  id: string,
  step: number,
  text: string,
  kind: TranscriptEntryKind = 'fact',
): TranscriptEntry => ({
  id,
  step,
  kind,
  text,
});
const ids = (hits: readonly TranscriptHit[]) => hits.map((hit) => hit.id);

/** A small incident transcript: ids, tool names, numbers, a diacritic, kinds across steps. */
const incident: TranscriptEntry[] = [
  entry('m1.goal', 1, 'Restore checkout for INC-4471 without a full redeploy', 'constraint'),
  {
    id: 'm2.b0.result',
    step: 2,
    kind: 'tool_result',
    tool: 'query_logs',
    message: 3,
    untrusted: true,
    text: 'web-3: upstream payments-api returned 503 (timeout after 30000 ms) on POST /v2/charge',
  },
  entry('m3.decision', 3, 'Roll back payments-api to v2.14.1 rather than restart the pods', 'decision'),
  entry('m4.b0.result', 4, 'rollback of payments-api to v2.14.1 failed: image pull error', 'tool_result'),
  entry('m5.dead', 5, 'Restarting the pods did not clear the 503s', 'dead_end'),
  entry('m6.fact', 6, 'Café menu service is unrelated; owned by the food team', 'fact'),
  entry('m7.msg', 7, 'The user asked for a status update in #inc-4471', 'message'),
];

describe.each(indexes)('TranscriptIndex conformance: %s', (_name, open) => {
  it('appends by id once: a repeated id, in a later batch or the same one, changes nothing', async () => {
    const index = open();
    await index.append(incident);
    await index.append([...incident, entry('m1.goal', 9, 'a different text under an old id')]);
    await index.append([entry('new', 8, 'first write wins'), entry('new', 8, 'second write loses')]);
    expect(await index.size()).toBe(incident.length + 1);
    expect((await index.get('m1.goal'))?.text).toBe(incident[0]!.text);
    expect((await index.get('new'))?.text).toBe('first write wins');
    expect(await index.search('different old', { k: 10 })).toEqual([]);
    expect(ids(await index.search('loses', { k: 10 }))).toEqual([]);
    expect(ids(await index.search('restore checkout', { k: 10 }))).toEqual(['m1.goal']);
  });

  it('returns an entry with every field it was given, and keeps no reference to the caller’s object', async () => {
    const index = open();
    const given = { ...incident[1]! };
    await index.append([given, incident[0]!]);
    given.text = 'mutated after append';
    expect(await index.get('m2.b0.result')).toEqual(incident[1]);
    expect(await index.get('m1.goal')).toEqual(incident[0]);
    expect(Object.keys((await index.get('m1.goal'))!).sort()).toEqual(['id', 'kind', 'step', 'text']);
    expect(await index.get('missing')).toBeUndefined();
    const [hit] = await index.search('payments timeout', { k: 1 });
    expect(hit).toEqual({ ...incident[1], score: expect.any(Number) });
    expect(hit!.score).toBeGreaterThan(0);
  });

  it('counts its entries', async () => {
    const index = open();
    expect(await index.size()).toBe(0);
    await index.append([]);
    await index.append(incident.slice(0, 3));
    expect(await index.size()).toBe(3);
    await index.append(incident);
    expect(await index.size()).toBe(incident.length);
  });

  it('finds entries sharing a term, best first, and at most k', async () => {
    const index = open();
    await index.append(incident);
    const hits = await index.search('payments-api rollback failed', { k: 10 });
    expect(new Set(ids(hits))).toEqual(new Set(['m2.b0.result', 'm3.decision', 'm4.b0.result']));
    expect(hits[0]!.id).toBe('m4.b0.result');
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    expect(ids(await index.search('payments-api rollback failed', { k: 2 }))).toEqual(ids(hits).slice(0, 2));
    expect(await index.search('payments', { k: 0 })).toEqual([]);
  });

  it('filters by kind and by step, before ranking and counting k', async () => {
    const index = open();
    await index.append(incident);
    const query = 'payments-api 503 pods';
    expect(ids(await index.search(query, { k: 10, kinds: ['tool_result'] })).sort()).toEqual([
      'm2.b0.result',
      'm4.b0.result',
    ]);
    expect(ids(await index.search(query, { k: 1, kinds: ['dead_end', 'decision'] }))).toHaveLength(1);
    expect(ids(await index.search(query, { k: 10, kinds: ['dead_end', 'decision'] })).sort()).toEqual([
      'm3.decision',
      'm5.dead',
    ]);
    expect(await index.search(query, { k: 10, kinds: [] })).toEqual([]);
    expect(ids(await index.search(query, { k: 10, beforeStep: 4 })).sort()).toEqual([
      'm2.b0.result',
      'm3.decision',
    ]);
    expect(await index.search(query, { k: 10, beforeStep: 2 })).toEqual([]);
    expect(ids(await index.search(query, { k: 10, beforeStep: 4, kinds: ['tool_result'] }))).toEqual([
      'm2.b0.result',
    ]);
  });

  it('breaks equal scores by the later step, then by the later append', async () => {
    const index = open();
    await index.append([
      entry('early', 2, 'disk full on db-1'),
      entry('late', 9, 'disk full on db-1'),
      entry('same-step-first', 5, 'disk full on db-1'),
      entry('same-step-second', 5, 'disk full on db-1'),
      entry('filler-a', 1, 'nothing to see'),
      entry('filler-b', 1, 'still nothing'),
      entry('filler-c', 1, 'quiet night'),
      entry('filler-d', 1, 'all green'),
    ]);
    const hits = await index.search('disk', { k: 10 });
    expect(ids(hits)).toEqual(['late', 'same-step-second', 'same-step-first', 'early']);
    expect(new Set(hits.map((hit) => hit.score)).size).toBe(1);
  });

  it('reads the query as plain words: query syntax, quotes and operators are words or separators', async () => {
    const index = open();
    await index.append(incident);
    for (const query of [
      '"rollback',
      'rollback*',
      'NEAR(rollback',
      'text:rollback',
      '-rollback',
      '^rollback',
      'rollback OR',
      'NOT rollback',
      '(((rollback',
      'rollback AND)',
      'roll\u0000back rollback',
      "rollback'; DROP TABLE entries; --",
    ]) {
      expect(ids(await index.search(query, { k: 10 })), query).toContain('m4.b0.result');
    }
    // `OR`, `AND` and `NEAR` are words no entry holds (and `NOT` above excluded nothing).
    expect(await index.search('OR AND NEAR', { k: 10 })).toEqual([]);
    expect(await index.search('"*" ^ - : ( ) \u0000', { k: 10 })).toEqual([]);
  });

  it('returns nothing for an empty, blank or unmatched query', async () => {
    const index = open();
    await index.append(incident);
    for (const query of ['', '   ', '\n\t', '--- ... !!!', 'kubernetes', '🙂'])
      expect(await index.search(query, { k: 10 }), JSON.stringify(query)).toEqual([]);
    expect(await open().search('payments', { k: 10 })).toEqual([]);
  });

  it('folds case and diacritics: café finds cafe, CAFE and a decomposed café', async () => {
    const index = open();
    await index.append([
      entry('plain', 1, 'cafe'),
      entry('upper', 2, 'CAFÉ'),
      entry('decomposed', 3, 'cafe\u0301'),
      entry('zurich', 4, 'Zürich datacenter'),
      entry('greek', 5, 'Ελληνικά'),
    ]);
    for (const query of ['café', 'cafe', 'Cafe\u0301'])
      expect(ids(await index.search(query, { k: 10 })).sort(), query).toEqual([
        'decomposed',
        'plain',
        'upper',
      ]);
    expect(ids(await index.search('ZURICH', { k: 10 }))).toEqual(['zurich']);
    expect(ids(await index.search('ελληνικά', { k: 10 }))).toEqual(['greek']);
  });

  it('finds ids and numbers: INC-4471 is inc and 4471, a version is its parts', async () => {
    const index = open();
    await index.append(incident);
    expect(ids(await index.search('4471', { k: 10 })).sort()).toEqual(['m1.goal', 'm7.msg']);
    expect(ids(await index.search('inc_4471', { k: 10 })).sort()).toEqual(['m1.goal', 'm7.msg']);
    expect(ids(await index.search('30000', { k: 10 }))).toEqual(['m2.b0.result']);
    expect(
      ids(await index.search('v2.14.1', { k: 10 }))
        .slice(0, 2)
        .sort(),
    ).toEqual(['m3.decision', 'm4.b0.result']);
  });

  it('indexes the first maxIndexedChars characters and stores the whole text', async () => {
    const index = open({ maxIndexedChars: 40 });
    const text = `${'head '.repeat(8)}tail`;
    await index.append([entry('long', 1, text)]);
    expect(ids(await index.search('head', { k: 1 }))).toEqual(['long']);
    expect(await index.search('tail', { k: 1 })).toEqual([]);
    expect((await index.get('long'))?.text).toBe(text);
  });

  it('treats a bad k, a bad entry or a bad option as a programmer error, and appends none of a bad batch', async () => {
    const index = open();
    for (const k of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(async () => index.search('x', { k }), String(k)).rejects.toSatisfy(isConfigurationError);
    const bad = { id: 'bad', step: 1, kind: 'fact', text: undefined } as unknown as TranscriptEntry;
    await expect(async () => index.append([entry('good', 1, 'fine'), bad])).rejects.toSatisfy(
      isConfigurationError,
    );
    expect(await index.size()).toBe(0);
    expect(() => open({ maxIndexedChars: 0 })).toThrow(/maxIndexedChars/);
  });
});

// ------------------------------------------------------------------------------------ properties

const vocabulary = [
  'timeout',
  'rollback',
  'deploy',
  'payments-api',
  'INC-4471',
  'inc',
  '503',
  'v2.14.1',
  'query_logs',
  'pods',
  'Café',
  'cafe',
  'naïve',
  'Zürich',
  'the',
  'failed',
  'OR',
  'NEAR',
  'ελληνικά',
  '日本語',
];
const separators = [' ', ' ', ' ', '-', '.', ': ', '/', '"', '(', ')', '*', '\n', ', '];
const kinds: TranscriptEntryKind[] = ['decision', 'dead_end', 'fact', 'constraint', 'tool_result', 'message'];
const words = (maxLength: number) =>
  fc
    .array(fc.tuple(fc.constantFrom(...vocabulary), fc.constantFrom(...separators)), { maxLength })
    .map((parts) => parts.map(([word, separator]) => word + separator).join(''));
const entries = fc
  .array(
    fc.record({ step: fc.integer({ min: 1, max: 8 }), kind: fc.constantFrom(...kinds), text: words(25) }),
    {
      maxLength: 40,
    },
  )
  .map((list) => list.map((item, i): TranscriptEntry => ({ id: `e${i % 35}`, ...item })));
const searches = fc.record(
  {
    query: fc.oneof(words(8), fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 20 })),
    // Small k mostly: the memory index skips common terms' postings only when k entries beat them.
    k: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 45 })),
    kinds: fc.subarray(kinds),
    beforeStep: fc.integer({ min: 1, max: 9 }),
  },
  { requiredKeys: ['query', 'k'] },
);

describe('TranscriptIndex properties', () => {
  it('every hit shares a term with the query, none is missing below k, best first; memory and SQLite agree', () => {
    fc.assert(
      fc.property(entries, searches, (list, search) => {
        const memory = memoryTranscriptIndex();
        const sqlite = sqliteTranscriptIndex(':memory:', { runId: 'property' });
        memory.append(list);
        sqlite.append(list);
        const { query, ...options } = search;
        const queryTerms = new Set(transcriptTerms(query));
        const stored = new Map<string, TranscriptEntry>();
        for (const item of list) if (!stored.has(item.id)) stored.set(item.id, item);
        const matching = [...stored.values()].filter(
          (item) =>
            transcriptTerms(item.text).some((term) => queryTerms.has(term)) &&
            (!options.kinds || options.kinds.includes(item.kind)) &&
            (options.beforeStep === undefined || item.step < options.beforeStep),
        );
        const memoryHits = memory.search(query, options);
        const sqliteHits = sqlite.search(query, options);
        sqlite.close();
        for (const hits of [memoryHits, sqliteHits]) {
          expect(hits.length).toBe(Math.min(options.k, matching.length));
          for (const hit of hits)
            expect(transcriptTerms(hit.text).some((term) => queryTerms.has(term))).toBe(true);
          if (hits.length < options.k) expect(new Set(ids(hits))).toEqual(new Set(matching.map((m) => m.id)));
          for (let i = 1; i < hits.length; i++) {
            const [previous, hit] = [hits[i - 1]!, hits[i]!];
            expect(hit.score).toBeLessThanOrEqual(previous.score);
            if (hit.score === previous.score) expect(hit.step).toBeLessThanOrEqual(previous.step);
          }
        }
        // The same BM25 as FTS5's bm25(), so the same order, not only the same set.
        expect(ids(memoryHits)).toEqual(ids(sqliteHits));
        for (const [i, hit] of memoryHits.entries())
          expect(Math.abs(hit.score - sqliteHits[i]!.score)).toBeLessThanOrEqual(1e-12 * hit.score);
      }),
      { numRuns: 300 },
    );
  });
});
