import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { TranscriptEntry } from '../context/transcript-index.js';
import { transcriptTerms } from '../context/transcript-terms.js';
import { isConfigurationError, isReinsError } from '../errors/reins-error.js';
import { fts5Statistics } from './fts5-statistics.js';
import { sqliteTranscriptIndex } from './sqlite-transcript-index.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-transcript-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `transcript-${files++}.db`);

const entry = (id: string, step: number, text: string): TranscriptEntry => ({ id, step, kind: 'fact', text });
const ids = (hits: readonly { id: string }[]) => hits.map((hit) => hit.id);

describe('sqliteTranscriptIndex', () => {
  it('keeps runs apart in one file: each searches, gets and counts only its own entries', () => {
    const path = freshPath();
    const first = sqliteTranscriptIndex(path, { runId: 'run-a' });
    const second = sqliteTranscriptIndex(path, { runId: 'run-b' });
    first.append([entry('m1', 1, 'deploy failed on web-3'), entry('m2', 2, 'rollback done')]);
    second.append([entry('m1', 1, 'deploy succeeded on web-9')]);
    expect(first.size()).toBe(2);
    expect(second.size()).toBe(1);
    expect(first.get('m1')?.text).toBe('deploy failed on web-3');
    expect(second.get('m1')?.text).toBe('deploy succeeded on web-9');
    expect(second.get('m2')).toBeUndefined();
    expect(ids(second.search('deploy rollback web', { k: 10 }))).toEqual(['m1']);
    expect(second.search('rollback', { k: 10 })).toEqual([]);
    expect(first.search('succeeded', { k: 10 })).toEqual([]);
    first.close();
    second.close();
  });

  it('survives a reopen, and a resumed run re-appending its transcript duplicates nothing', () => {
    const path = freshPath();
    const transcript = [entry('m1', 1, 'INC-4471 opened'), entry('m2', 2, 'pods restarted, still 503')];
    const before = sqliteTranscriptIndex(path, { runId: 'run-a' });
    before.append(transcript);
    const hitsBefore = before.search('503 inc-4471', { k: 10 });
    before.close();

    const after = sqliteTranscriptIndex(path, { runId: 'run-a' });
    expect(after.size()).toBe(2);
    expect(after.get('m2')).toEqual(transcript[1]);
    after.append([...transcript, entry('m3', 3, 'rolled back, 503 gone')]);
    expect(after.size()).toBe(3);
    expect(after.search('503 inc-4471', { k: 10 }).filter((hit) => hit.id !== 'm3')).toHaveLength(2);
    after.close();

    const db = new Database(path);
    expect(db.prepare('SELECT count(*) AS n FROM reins_transcript_fts').get()).toEqual({ n: 3 });
    db.close();
    expect(ids(hitsBefore).sort()).toEqual(['m1', 'm2']);
  });

  it('ranks as a fresh index would after its own appends and another connection’s', () => {
    const path = freshPath();
    const texts = [
      'the disk is full',
      'the pod restarted',
      'the error is a timeout',
      'a disk error',
      'the end',
    ];
    const mine = sqliteTranscriptIndex(path, { runId: 'run-a' });
    const theirs = sqliteTranscriptIndex(path, { runId: 'run-b' });
    const queries = ['the disk error', 'a timeout', 'the pod', 'the'];
    const expectFresh = () => {
      const fresh = sqliteTranscriptIndex(path, { runId: 'run-a' });
      for (const query of queries)
        expect(mine.search(query, { k: 2 }), query).toEqual(fresh.search(query, { k: 2 }));
      fresh.close();
    };
    for (let round = 0; round < 12; round++) {
      const writer = round % 3 === 2 ? theirs : mine;
      writer.append([entry(`e${round}`, round + 1, texts[round % texts.length]!)]);
      expectFresh();
    }
    mine.close();
    theirs.close();
  });

  it('keeps its term counts exact across its own appends and another connection’s', () => {
    const path = freshPath();
    const other = sqliteTranscriptIndex(path, { runId: 'run-b' });
    const db = new Database(path);
    const statistics = fts5Statistics(db, 'reins_transcript_fts');
    const insert = db.prepare('INSERT INTO reins_transcript_fts (rowid, text) VALUES (?, ?)');
    const rowsWith = (term: string) =>
      (
        db
          .prepare('SELECT count(*) AS n FROM reins_transcript_fts WHERE reins_transcript_fts MATCH ?')
          .get(`"${term}"`) as { n: number }
      ).n;
    for (let round = 0; round < 12; round++) {
      const text = round % 2 ? 'alpha beta' : 'alpha';
      if (round % 3 === 2) other.append([entry(`e${round}`, round + 1, text)]);
      else {
        // An append of its own connection, counted as the index counts one once committed.
        insert.run(10_000 + round, text);
        statistics.added(() => new Set(transcriptTerms(text)));
      }
      expect(statistics.totals().rows).toBe(round + 1);
      for (const term of ['alpha', 'beta', 'gamma'])
        expect(statistics.rowsWith(term), term).toBe(rowsWith(term));
    }
    db.close();
    other.close();
  });

  it('takes an open database and leaves it open; a table name of its own; a bad name is a configuration error', () => {
    const db = new Database(':memory:');
    const index = sqliteTranscriptIndex(db, { runId: 'r', table: 'agent_memory' });
    index.append([entry('m1', 1, 'hello')]);
    index.close();
    expect(db.open).toBe(true);
    expect(db.prepare('SELECT id FROM agent_memory').all()).toEqual([{ id: 'm1' }]);
    db.close();
    for (const table of ['x; DROP TABLE y', '', '1abc'])
      expect(
        optionRefused(() => sqliteTranscriptIndex(':memory:', { runId: 'r', table })),
        table,
      ).toBe('table');
    expect(optionRefused(() => sqliteTranscriptIndex(':memory:', { runId: '' }))).toBe('runId');
  });

  it('says FTS5 is missing when the SQLite build has none, and closes the database it opened', () => {
    const real = new Database(':memory:');
    // A build without FTS5 has no fts5_source_id(): stand in for one.
    const withoutFts5 = new Proxy(real, {
      get(target, property) {
        if (property === 'prepare')
          return (sql: string) => {
            if (sql.includes('fts5')) throw new Error('no such function: fts5_source_id');
            return target.prepare(sql);
          };
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let thrown: unknown;
    try {
      sqliteTranscriptIndex(withoutFts5, { runId: 'r' });
    } catch (error) {
      thrown = error;
    }
    expect(isReinsError(thrown) && thrown.reason).toBe('fts5_unavailable');
    expect((thrown as Error).message).toMatch(/FTS5/);
    real.close();
  });

  describe('a model-written query is never FTS5 syntax', () => {
    const index = sqliteTranscriptIndex(':memory:', { runId: 'r' });
    index.append([
      entry('m1', 1, 'text foo near the gateway'),
      entry('m2', 2, 'OR and NOT are plain words here'),
      entry('m3', 3, 'nothing in common'),
    ]);
    const hostile: [string, string[]][] = [
      ['"', []],
      ['""""', []],
      ['"foo', ['m1']],
      ['foo"', ['m1']],
      ['*', []],
      ['foo*', ['m1']],
      ['NEAR(', ['m1']],
      ['NEAR(foo gateway, 2)', ['m1']],
      ['OR', ['m2']],
      ['foo OR', ['m1', 'm2']],
      ['-', []],
      ['-foo', ['m1']],
      ['^', []],
      ['^foo', ['m1']],
      ['text:foo', ['m1']],
      ['{text}: foo', ['m1']],
      ['rowid:1', []],
      ['((foo', ['m1']],
      ['foo))', ['m1']],
      ['foo AND', ['m1', 'm2']],
      ['\u0000', []],
      ['foo\u0000gateway', ['m1']],
      ['\uD800foo', ['m1']],
      ["foo'; DROP TABLE reins_transcript; --", ['m1']],
      ['+foo', ['m1']],
      [`${'x '.repeat(5_000)}foo`, ['m1']],
      [Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(' '), []],
    ];
    it.each(hostile)('%j gives hits or nothing, never an SQL error', (query, expected) => {
      expect(ids(index.search(query, { k: 10 })).sort()).toEqual(expected);
    });

    it('any string at all, 10 KB of it included', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.string({ unit: 'binary', maxLength: 200 }),
            fc.string({ unit: 'binary', minLength: 10_000, maxLength: 10_240 }),
            fc
              .array(
                fc.constantFrom(
                  '"',
                  '*',
                  'NEAR(',
                  'OR',
                  'AND',
                  'NOT',
                  '-',
                  '^',
                  ':',
                  '(',
                  ')',
                  'foo',
                  '\u0000',
                  ' ',
                ),
              )
              .map((parts) => parts.join('')),
          ),
          (query) => {
            const hits = index.search(query, { k: 10 });
            const terms = new Set(transcriptTerms(query));
            for (const hit of hits)
              expect(transcriptTerms(hit.text).some((term) => terms.has(term))).toBe(true);
          },
        ),
        { numRuns: 300 },
      );
      expect(index.size()).toBe(3);
    });
  });
});

describe('transcriptTerms reads text as FTS5 unicode61 remove_diacritics 2 does', () => {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE probe USING fts5(text, tokenize='unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, 'instance');`);
  const insert = db.prepare<[number, string]>('INSERT INTO probe (rowid, text) VALUES (?, ?)');
  const read = db.prepare<[], { doc: number; term: string }>(
    'SELECT doc, term FROM probe_terms ORDER BY doc, offset',
  );
  /** FTS5's terms of each text. */
  const fts5Terms = (texts: readonly string[]): string[][] => {
    db.exec('DELETE FROM probe');
    db.transaction(() => {
      for (const [i, text] of texts.entries()) insert.run(i + 1, text);
    })();
    const terms: string[][] = texts.map(() => []);
    for (const row of read.iterate()) terms[row.doc - 1]!.push(row.term);
    return terms;
  };

  it('on technical text in several scripts', () => {
    const texts = [
      'INC-4471: payments-api returned 503 after 30000ms (retry #3) v2.14.1 0x1F foo_bar',
      'Café CAFÉ naïve Zürich São Łódź Øre straße STRASSE İstanbul ǅemal ǖ ệ',
      'ΟΔΟΣ οδός ά Москва ёлка й 日本語テキスト 한국어 中文 हिन्दी עִבְרִית العربية',
      'e\u0301te\u0301 \u0301x a\u0332b µs ſ ς ϐ ı K Å Ω １２３ Ａｂｃ ½ ² Ⅻ ﬁle',
      'soft\u00adhyphen zero\u200bwidth emoji😀ok tab\tnew\nline «quoted» “curly” don’t',
    ];
    expect(texts.map(transcriptTerms)).toEqual(fts5Terms(texts));
  });

  it('on every code point of the Latin, Greek, Cyrillic, Devanagari, kana, Hangul and full-width blocks', () => {
    // Unicode 7 added these five capitals after FTS5's tables: FTS5 leaves them unfolded.
    const newer = new Set([0x37f, 0x528, 0x52a, 0x52c, 0x52e]);
    const blocks = [
      [0x1, 0x52f],
      [0x900, 0x97f],
      [0x1e00, 0x1fff],
      [0x3000, 0x30ff],
      [0x4e00, 0x4e3f],
      [0xac00, 0xac3f],
      [0xff00, 0xffef],
    ] as const;
    const texts: string[] = [];
    for (const [low, high] of blocks)
      for (let code = low; code <= high; code++) {
        if (newer.has(code)) continue;
        const character = String.fromCodePoint(code);
        // Alone, inside a term and after one: a separator, a letter, a diacritic folded away.
        texts.push(character, `a${character}b`, `x${character}`);
      }
    expect(texts.map(transcriptTerms)).toEqual(fts5Terms(texts));
  });
});

/** The option a ConfigurationError names, or what else happened. */
function optionRefused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return isConfigurationError(error) ? error.option : `not a ConfigurationError: ${String(error)}`;
  }
  return 'nothing thrown';
}
