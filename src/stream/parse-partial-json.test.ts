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

  it('a bad number is named in the message, cut short when long', () => {
    const short = createPartialJsonParser();
    short.push('[1.e5]');
    expect(short.finish()).toMatchObject({ status: 'invalid', offset: 3, message: 'invalid number "1.e"' });
    const long = createPartialJsonParser();
    long.push(`[${'7'.repeat(100_000)}.]`);
    expect(long.finish()).toMatchObject({
      status: 'invalid',
      offset: 100_002,
      message: `invalid number "${'7'.repeat(64)}…"`,
    });
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

describe('long and deep shapes', () => {
  /** Pushes `text` in pieces of `size`, reading the snapshot after each, and returns the verdict. */
  const stream = (text: string, size: number, read: (snapshot: unknown) => void = () => {}) => {
    const parser = createPartialJsonParser({ maxDepth: 1_000_000 });
    for (const part of split(text, size)) {
      parser.push(part);
      read(parser.snapshot());
    }
    return parser.finish();
  };

  it('one long string in tiny pushes: every snapshot a growing prefix, the end JSON.parse’s value', () => {
    const random = seededRandom(5);
    const alphabet = ['a', 'é', '😀', '"', '\\', '\n', '\t', '\u2028', '\u0001', '/', ' '];
    let body = '';
    while (body.length < 20_000) body += alphabet[Math.floor(random() * alphabet.length)];
    // `\u`-escaped and raw forms of the same characters, so escapes and surrogates split everywhere.
    const texts = [
      JSON.stringify({ content: body }),
      JSON.stringify({ content: body }).replace(
        /[^\x20-\x7e]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
    ];
    for (const text of texts) {
      for (const size of [1, 3, 16]) {
        let previous = 0;
        let pushes = 0;
        const wrong: string[] = [];
        const result = stream(text, size, (snapshot) => {
          const shown = (snapshot as { content?: string }).content ?? '';
          if (shown.length < previous) wrong.push(`shrank at push ${pushes}`);
          previous = shown.length;
          // Reading the whole string flattens it (the test's cost, not the parser's): every 40th push.
          if (pushes++ % 40 !== 0) return;
          if (!body.startsWith(shown)) wrong.push(`not a prefix at push ${pushes}`);
          const last = shown.charCodeAt(shown.length - 1);
          if (last >= 0xd800 && last <= 0xdbff) wrong.push(`half a surrogate pair at push ${pushes}`);
        });
        expect(wrong.slice(0, 3)).toEqual([]);
        expect(result).toEqual({ status: 'complete', value: { content: body } });
      }
    }
  });

  it('long numbers: every complete prefix shows Number(prefix), and the end is JSON.parse’s value', () => {
    const random = seededRandom(6);
    const digits = (count: number, first = '') => {
      let out = first;
      while (out.length < count) out += String(Math.floor(random() * 10));
      return out;
    };
    const zeros = (count: number) => '0'.repeat(count);
    const numbers = [
      digits(2_000, '7'), // Infinity long before the end
      `3.${digits(5_000)}`,
      `-0.${zeros(900)}${digits(1_200, '4')}`,
      `${digits(400, '1')}e-395`, // a long integer part brought back into range
      `0.${zeros(500)}1e501`,
      // Halfway between 2^53 and 2^53 + 2: rounds to even, unless a nonzero digit follows far beyond.
      '9007199254740993',
      `9007199254740993.${zeros(1_000)}`,
      `9007199254740993.${zeros(1_000)}1`,
      `9007199254740993${zeros(900)}1e-901`,
      '-0',
      '-0.000e5',
      '0e400',
      '1e400',
      '-1e400',
      '1e-400',
      '2.4703282292062328e-324', // just above half the smallest subnormal
      '2.4703282292062327e-324', // just below: 0
      '1.7976931348623158e308',
      '1.7976931348623159e308', // rounds to Infinity
      `1E+${zeros(300)}2`,
      `1e${digits(400, '9')}`,
      `1e-${digits(400, '9')}`,
      '123456789012345678901234567890',
    ];
    for (const number of numbers) {
      const text = `[${number}]`;
      for (const size of [1, 7, 64]) {
        let seen = 0;
        let whole: string | undefined; // the number as of the last push that left it whole
        const result = stream(text, size, (snapshot) => {
          seen += size;
          const prefix = text.slice(1, Math.min(seen, text.length - 1));
          if (seen < text.length - 1 && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(prefix))
            whole = prefix;
          if (seen >= text.length - 1) whole = number;
          const value = (snapshot as number[])[0];
          if (whole === undefined) expect(value).toBeUndefined();
          else expect(Object.is(value, Number(whole)), `${number.slice(0, 40)} @${seen}`).toBe(true);
        });
        expect(result.status).toBe('complete');
        const value = (result as { value: number[] }).value[0];
        expect(Object.is(value, JSON.parse(text)[0]), number.slice(0, 40)).toBe(true);
      }
    }
    // A whole document that is one number.
    const top = `-${digits(3_000, '5')}.${digits(3_000)}e-2950`;
    expect(stream(top, 5)).toEqual({ status: 'complete', value: JSON.parse(top) });
  });

  it('nesting at and past the default maxDepth, pushed one character at a time', () => {
    const nest = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    for (const depth of [511, 512]) {
      const parser = createPartialJsonParser();
      for (const part of split(nest(depth), 1)) {
        parser.push(part);
        parser.snapshot();
      }
      const result = parser.finish();
      expect(result.status).toBe('complete');
      let value = (result as { value: unknown }).value;
      for (let level = 0; level < depth; level++) value = (value as unknown[])[0];
      expect(value).toBe(1);
    }
    const parser = createPartialJsonParser();
    parser.push(nest(513));
    expect(parser.finish()).toMatchObject({ status: 'invalid', reason: 'depth_limit', offset: 512 });
  });

  it('deep nesting under a raised maxDepth: the truncated verdict names the open path', () => {
    const depth = 20_000;
    const parser = createPartialJsonParser({ maxDepth: depth });
    for (const part of split(`${'[{"k":'.repeat(depth / 2)}"x`, 5)) parser.push(part);
    const result = parser.finish();
    expect(result.status).toBe('truncated');
    const openPath = (result as { openPath: (string | number)[] }).openPath;
    expect(openPath.length).toBe(depth);
    expect(openPath.slice(0, 4)).toEqual([0, 'k', 0, 'k']);
  });
});

describe('snapshot() is the live display tree', () => {
  it('returns the same root as the document fills in; strings are replaced by longer ones', () => {
    const parser = createPartialJsonParser();
    parser.push('{"a": [1, {"b": "x');
    const first = parser.snapshot() as unknown as { a: [number, { b: string }] };
    const inner = first.a[1];
    parser.push('yz"}, 2.');
    expect(parser.snapshot()).toBe(first);
    expect(first.a[1]).toBe(inner);
    expect(inner.b).toBe('xyz');
    parser.push('5], "c": tru');
    expect(parser.snapshot()).toEqual({ a: [1, { b: 'xyz' }, 2.5] });
    parser.push('e}');
    const result = parser.finish();
    expect(result).toEqual({ status: 'complete', value: { a: [1, { b: 'xyz' }, 2.5], c: true } });
    expect((result as { value: unknown }).value).toBe(first);
  });

  it('a number is shown when read, whether or not every push was read', () => {
    const parser = createPartialJsonParser();
    parser.push('{"n": 1');
    parser.push('23');
    // As it stood after the last push that left it whole: `1234e` is not a number.
    parser.push('4e');
    expect(parser.snapshot()).toEqual({ n: 123 });
    parser.push('2');
    expect(parser.snapshot()).toEqual({ n: 123400 });
  });

  it('change events: a number is set only when its value changes; appends add up to the string', () => {
    const changes: PartialJsonChange[] = [];
    const parser = createPartialJsonParser({ onChange: (change) => changes.push(structuredClone(change)) });
    for (const part of ['{"n": 1', '2', '.', '0', '5', ', "s": "a😀', 'b', '"}']) parser.push(part);
    const emoji = '😀';
    parser.push('');
    expect(changes).toEqual([
      { type: 'set', path: [], value: {} },
      { type: 'set', path: ['n'], value: 1 },
      { type: 'set', path: ['n'], value: 12 },
      { type: 'set', path: ['n'], value: 12.05 },
      { type: 'set', path: ['s'], value: '' },
      { type: 'append', path: ['s'], text: `a${emoji}` },
      { type: 'append', path: ['s'], text: 'b' },
      { type: 'set', path: ['s'], value: `a${emoji}b` },
    ]);
    // A surrogate pair split across pushes is appended whole.
    const split: PartialJsonChange[] = [];
    const second = createPartialJsonParser({ onChange: (change) => split.push(change) });
    for (const part of ['["x', emoji[0] as string, `${emoji[1]}y`, '"]']) second.push(part);
    expect(split.filter((change) => change.type === 'append').map((change) => change.text)).toEqual([
      'x',
      `${emoji}y`,
    ]);
  });
});
