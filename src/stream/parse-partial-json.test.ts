import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../testing/seeded-random.js';
import { createPartialJsonParser, type PartialJsonChange } from './parse-partial-json.js';

const suite = new URL('../../test/fixtures/JSONTestSuite/', import.meta.url).pathname;
const files = readdirSync(suite).filter((name) => name.endsWith('.json'));
// JSONTestSuite files are bytes; JSON.parse sees the text a UTF-8 decoder gives.
const read = (name: string) => new TextDecoder('utf-8').decode(readFileSync(join(suite, name)));
const accepted = files.filter((name) => name.startsWith('y_'));
const rejected = files.filter((name) => name.startsWith('n_'));

function split(text: string, sizes: number | ((index: number) => number)): string[] {
  const parts: string[] = [];
  for (let at = 0, n = 0; at < text.length; n++) {
    const size = typeof sizes === 'number' ? sizes : sizes(n);
    parts.push(text.slice(at, at + size));
    at += size;
  }
  return parts;
}

/** Records every visible value's type along a stream, and fails on one that vanished or changed type. */
function watch(parts: string[]) {
  const parser = createPartialJsonParser();
  const seen = new Map<string, string>();
  const walk = (value: unknown, path: string, out: Map<string, string>) => {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    out.set(path, kind);
    if (value && typeof value === 'object')
      for (const [key, member] of Object.entries(value)) walk(member, `${path}/${key}`, out);
  };
  for (const part of parts) {
    parser.push(part);
    const now = new Map<string, string>();
    const snapshot = parser.snapshot();
    if (snapshot !== undefined) walk(snapshot, '', now);
    for (const [path, kind] of seen) {
      expect(now.get(path), `${path} vanished or changed type`).toBe(kind);
    }
    for (const [path, kind] of now) seen.set(path, kind);
  }
  return parser;
}

describe('finish() has exactly JSON.parse\u2019s grammar on JSONTestSuite', () => {
  it(`accepts every y_ file (${accepted.length}) with JSON.parse\u2019s value, at fragment sizes 1, 3, 16 and random`, () => {
    const random = seededRandom(99);
    for (const name of accepted) {
      const text = read(name);
      const expected = JSON.parse(text);
      for (const sizes of [1, 3, 16, () => 1 + Math.floor(random() * 20)]) {
        const parser = watch(split(text, sizes));
        expect(parser.finish(), name).toEqual({ status: 'complete', value: expected });
      }
    }
  });

  it(`rejects every n_ file (${rejected.length}); never complete`, () => {
    for (const name of rejected) {
      const text = read(name);
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      if (parses) continue; // a few n_ files are accepted by JavaScript's JSON.parse itself
      for (const size of [1, 7]) {
        const parser = createPartialJsonParser();
        for (const part of split(text, size)) parser.push(part);
        expect(parser.finish().status, name).not.toBe('complete');
      }
    }
  });

  it('reports every cut-off prefix of a y_ document that is not itself JSON as truncated, never invalid', () => {
    for (const name of accepted) {
      const text = read(name);
      for (let cut = 0; cut < text.length; cut++) {
        const prefix = text.slice(0, cut);
        let valid = true;
        try {
          JSON.parse(prefix);
        } catch {
          valid = false;
        }
        const parser = createPartialJsonParser();
        parser.push(prefix);
        const result = parser.finish();
        if (valid) expect(result.status, `${name} @${cut}`).toBe('complete');
        else if (/^\s*$/.test(text.slice(cut))) continue;
        else expect(result, `${name} @${cut}`).toMatchObject({ status: 'truncated', offset: cut });
      }
    }
  });
});

describe('display rules', () => {
  const shown = (parts: string[]) => {
    const parser = createPartialJsonParser();
    return parts.map((part) => {
      parser.push(part);
      return JSON.stringify(parser.snapshot());
    });
  };

  it('keys appear only when closed; strings grow; numbers only when valid; literals only when whole', () => {
    expect(shown(['{"ke', 'y": "va', 'lue", "n": 1', '2', '.', '5', ', "b": tr', 'ue}'])).toEqual([
      '{}',
      '{"key":"va"}',
      '{"key":"value","n":1}',
      '{"key":"value","n":12}',
      '{"key":"value","n":12}',
      '{"key":"value","n":12.5}',
      '{"key":"value","n":12.5}',
      '{"key":"value","n":12.5,"b":true}',
    ]);
    expect(shown(['[-', '1', 'e', '5]'])).toEqual(['[]', '[-1]', '[-1]', '[-100000]']);
  });

  it('a split escape or surrogate pair shows nothing half-decoded', () => {
    expect(shown(['"a\\', 'n\\u00', 'e9\\ud83d', '\\ude00"'])).toEqual([
      '"a"',
      '"a\\n"',
      '"a\\né"',
      '"a\\né😀"',
    ]);
    // A raw surrogate pair split between fragments.
    const emoji = '😀';
    expect(shown([`"x${emoji[0]}`, `${emoji[1]}y"`])).toEqual(['"x"', `"x${emoji}y"`]);
  });

  it('__proto__ keys are data, and nothing is polluted', () => {
    const parser = createPartialJsonParser();
    parser.push('{"__proto__": {"polluted": true}, "a": 1}');
    const result = parser.finish();
    expect(result).toEqual({
      status: 'complete',
      value: JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'),
    });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf((result as { value: object }).value)).toBe(Object.prototype);
  });

  it('an error mid-stream stays the verdict; later pushes cannot hide it', () => {
    const parser = createPartialJsonParser();
    parser.push('{"a": 1 x');
    parser.push('}');
    expect(parser.finish()).toMatchObject({ status: 'invalid', offset: 8, reason: 'syntax' });
  });

  it('depth and size limits are typed', () => {
    const deep = createPartialJsonParser({ maxDepth: 3 });
    deep.push('[[[[1]]]]');
    expect(deep.finish()).toMatchObject({ status: 'invalid', reason: 'depth_limit', offset: 3 });
    const big = createPartialJsonParser({ maxLength: 10 });
    big.push('"0123456789abc"');
    expect(big.finish()).toMatchObject({ status: 'invalid', reason: 'size_limit' });
  });

  it('change events name what changed', () => {
    const changes: PartialJsonChange[] = [];
    // Containers are live objects that keep filling in: record each event as it was.
    const parser = createPartialJsonParser({ onChange: (change) => changes.push(structuredClone(change)) });
    parser.push('{"a": ["x');
    parser.push('y", 2]}');
    expect(changes).toEqual([
      { type: 'set', path: [], value: {} },
      { type: 'set', path: ['a'], value: [] },
      { type: 'push', path: ['a'], value: '' },
      { type: 'append', path: ['a', 0], text: 'x' },
      { type: 'set', path: ['a', 0], value: 'xy' },
      { type: 'push', path: ['a'], value: 2 },
    ]);
  });
});
