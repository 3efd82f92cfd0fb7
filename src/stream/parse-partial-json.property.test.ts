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
