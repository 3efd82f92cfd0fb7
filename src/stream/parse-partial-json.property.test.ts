import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPartialJsonParser } from './parse-partial-json.js';

const splits = (text: string) =>
  fc
    .array(fc.integer({ min: 0, max: text.length }), { maxLength: 12 })
    .map((cuts) => [...new Set(cuts)].sort((a, b) => a - b));

function parts(text: string, cuts: number[]): string[] {
  const out: string[] = [];
  let at = 0;
  for (const cut of cuts) {
    out.push(text.slice(at, cut));
    at = cut;
  }
  out.push(text.slice(at));
  return out;
}

describe('property: agrees with JSON.parse on random documents and random splits', () => {
  it('a whole document is complete with JSON.parse\u2019s value, however it is split', () => {
    const documents = fc.jsonValue().chain((value) => {
      const text = JSON.stringify(value, null, value === null ? undefined : 1);
      return fc.tuple(fc.constant(text), splits(text));
    });
    fc.assert(
      fc.property(documents, ([text, cuts]) => {
        const parser = createPartialJsonParser();
        for (const part of parts(text, cuts)) parser.push(part);
        expect(parser.finish()).toEqual({ status: 'complete', value: JSON.parse(text) });
      }),
      { numRuns: 400, seed: 20261129 },
    );
  });

  it('a cut-off document is truncated (or complete when the prefix is itself JSON); never invalid', () => {
    const cutDocuments = fc.jsonValue().chain((value) => {
      const text = JSON.stringify(value);
      return fc.tuple(fc.constant(text), fc.integer({ min: 0, max: Math.max(0, text.length - 1) }));
    });
    fc.assert(
      fc.property(cutDocuments, ([text, cut]) => {
        const prefix = text.slice(0, cut);
        const parser = createPartialJsonParser();
        parser.push(prefix);
        const result = parser.finish();
        let valid = true;
        try {
          JSON.parse(prefix);
        } catch {
          valid = false;
        }
        expect(result.status).toBe(valid ? 'complete' : 'truncated');
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('random text that JSON.parse rejects is never complete', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(
            '{',
            '}',
            '[',
            ']',
            '"',
            ':',
            ',',
            '1',
            '-',
            '.',
            'e',
            't',
            'n',
            ' ',
            '\\',
            'a',
          ),
        }),
        (text) => {
          let valid = true;
          try {
            JSON.parse(text);
          } catch {
            valid = false;
          }
          const parser = createPartialJsonParser();
          parser.push(text);
          const status = parser.finish().status;
          if (valid) expect(status).toBe('complete');
          else expect(status).not.toBe('complete');
        },
      ),
      { numRuns: 2_000, seed: 11 },
    );
  });
});

describe('property: a snapshot after every push', () => {
  /** Pushes the parts, reading (and serializing) the snapshot after each; returns what was shown. */
  function pushReading(text: string, cuts: number[]) {
    const parser = createPartialJsonParser();
    const shown: unknown[] = [];
    for (const part of parts(text, cuts)) {
      parser.push(part);
      const snapshot = parser.snapshot();
      shown.push(snapshot === undefined ? undefined : JSON.parse(JSON.stringify(snapshot)));
    }
    return { shown, result: parser.finish() };
  }

  it('never throws, and finish() still gives JSON.parse’s value', () => {
    const documents = fc.jsonValue({ maxDepth: 6 }).chain((value) => {
      const text = JSON.stringify(value);
      return fc.tuple(fc.constant(text), splits(text));
    });
    fc.assert(
      fc.property(documents, ([text, cuts]) => {
        const { result } = pushReading(text, cuts);
        expect(result).toEqual({ status: 'complete', value: JSON.parse(text) });
      }),
      { numRuns: 400, seed: 20261201 },
    );
  });

  it('a string of any code units shows a growing prefix, never half a surrogate pair', () => {
    const strings = fc.string({ unit: 'binary', maxLength: 300 }).chain((value) => {
      const text = JSON.stringify(value);
      return fc.tuple(fc.constant(value), fc.constant(text), splits(text));
    });
    fc.assert(
      fc.property(strings, ([value, text, cuts]) => {
        const { shown, result } = pushReading(text, cuts);
        let previous = '';
        for (const display of shown.slice(0, -1)) {
          if (display === undefined) continue;
          const string = display as string;
          expect(value.startsWith(string)).toBe(true);
          expect(string.length).toBeGreaterThanOrEqual(previous.length);
          const last = string.charCodeAt(string.length - 1);
          if (string.length < value.length) expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
          previous = string;
        }
        expect(result).toEqual({ status: 'complete', value });
      }),
      { numRuns: 400, seed: 3 },
    );
  });

  it('a number of any length shows Number() of itself as of the last push that left it whole', () => {
    const digits = (min: number, max: number) =>
      fc.string({ unit: fc.constantFrom('0', '1', '4', '5', '9'), minLength: min, maxLength: max });
    const numbers = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(
          fc.constant('0'),
          fc.tuple(fc.constantFrom('1', '5', '9'), digits(0, 1_000)).map(([a, b]) => a + b),
        ),
        fc.option(digits(1, 1_000), { nil: undefined }),
        fc.option(fc.tuple(fc.constantFrom('e', 'E+', 'e-'), digits(1, 4)), { nil: undefined }),
      )
      .map(
        ([sign, integer, fraction, exponent]) =>
          `${sign}${integer}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : exponent.join('')}`,
      )
      .chain((number) => {
        const text = `[${number}]`;
        return fc.tuple(fc.constant(number), fc.constant(text), splits(text));
      });
    const whole = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
    fc.assert(
      fc.property(numbers, ([number, text, cuts]) => {
        const { shown, result } = pushReading(`${text}`, cuts);
        let last: string | undefined;
        const ends = [...cuts, text.length];
        shown.forEach((display, index) => {
          const end = ends[index] as number;
          const prefix = text.slice(1, Math.min(end, text.length - 1));
          if (end >= text.length - 1) last = number;
          else if (whole.test(prefix)) last = prefix;
          const value = (display as number[] | undefined)?.[0];
          // JSON.stringify shows -0 as 0 and ±Infinity as null.
          const expected = last === undefined ? undefined : Number(last);
          expect(value).toBe(
            expected === undefined ? undefined : Number.isFinite(expected) ? expected + 0 : null,
          );
        });
        const value = (result as { value: number[] }).value[0] as number;
        expect(Object.is(value, JSON.parse(text)[0])).toBe(true);
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});
