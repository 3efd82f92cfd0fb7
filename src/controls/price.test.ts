import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ModelPrice, type PriceTable, priceFor, resolvePrice } from './price.js';

const price = (input: number, output = input * 5): ModelPrice => ({
  inputUsdPerMillionTokens: input,
  outputUsdPerMillionTokens: output,
});

const sonnet = price(3);
const fourO = price(2.5);
const fourOMini = price(0.15);
const four = price(30);
const fallback = price(100);

describe('resolvePrice', () => {
  const table: PriceTable = {
    'claude-sonnet-4-5': sonnet,
    'gpt-4o': fourO,
    'gpt-4o-mini': fourOMini,
    'gpt-4': four,
  };

  it('takes an exact key first', () => {
    expect(resolvePrice(table, 'gpt-4o')).toEqual({
      price: fourO,
      matched: 'gpt-4o',
      rule: 'exact',
      id: 'gpt-4o',
    });
    expect(
      resolvePrice({ ...table, 'claude-sonnet-4-5-20250929': fallback }, 'claude-sonnet-4-5-20250929'),
    ).toMatchObject({
      price: fallback,
      rule: 'exact',
    });
  });

  it('drops a trailing date stamp: -YYYYMMDD, -YYYY-MM-DD, @YYYYMMDD', () => {
    for (const id of ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5@20250929']) {
      expect(resolvePrice(table, id)).toEqual({
        price: sonnet,
        matched: 'claude-sonnet-4-5',
        rule: 'undated',
        id,
      });
    }
    expect(resolvePrice(table, 'gpt-4o-2024-08-06')).toMatchObject({ matched: 'gpt-4o', rule: 'undated' });
    expect(resolvePrice(table, 'gpt-4o-mini-2024-07-18')).toMatchObject({
      matched: 'gpt-4o-mini',
      rule: 'undated',
    });
  });

  it('takes the longest key the id starts with at a -, @ or : boundary, followed by a date or version', () => {
    expect(resolvePrice(table, 'claude-sonnet-4-5-20250929-v1:0')).toMatchObject({
      price: sonnet,
      matched: 'claude-sonnet-4-5',
      rule: 'prefix',
    });
    expect(resolvePrice(table, 'gpt-4o-mini-2024-07-18-ft:1')).toMatchObject({
      price: fourOMini,
      matched: 'gpt-4o-mini',
    });
    expect(resolvePrice(table, 'gpt-4:0613')).toMatchObject({ price: four, matched: 'gpt-4' });
    // A word after the boundary names another model (maybe a dearer one): no price, fail closed.
    for (const id of ['gpt-4o-mini-realtime', 'gpt-4o-audio-preview', 'gpt-4@eu', 'o1-pro'])
      expect(resolvePrice({ ...table, o1: four }, id), id).toBeUndefined();
  });

  it('never prices an id by a key that is not followed by a separator', () => {
    // gpt-4 must not price gpt-4o, gpt-4.1 or gpt-4-turbo's cousin gpt-4turbo.
    const onlyFour: PriceTable = { 'gpt-4': four };
    for (const id of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4turbo', 'gpt-45', 'gpt-', 'gpt']) {
      expect(resolvePrice(onlyFour, id), id).toBeUndefined();
    }
    expect(resolvePrice({ 'gpt-4': four, '*': fallback }, 'gpt-4o')).toMatchObject({
      price: fallback,
      rule: 'fallback',
    });
    // A longer key is never a prefix of a shorter id.
    expect(resolvePrice({ 'gpt-4o-mini': fourOMini }, 'gpt-4o')).toBeUndefined();
    // A date stamp is removed only at the end, and only a whole one.
    expect(resolvePrice({ 'claude-sonnet-4-5': sonnet }, 'claude-sonnet-4-520250929')).toBeUndefined();
    expect(resolvePrice({ 'claude-sonnet-4': sonnet }, 'claude-sonnet-420250929')).toBeUndefined();
  });

  it('gpt-4o does not price gpt-4o-mini when gpt-4o-mini is in the table: longest wins', () => {
    expect(resolvePrice(table, 'gpt-4o-mini')).toMatchObject({ price: fourOMini, matched: 'gpt-4o-mini' });
    expect(resolvePrice(table, 'gpt-4o-mini-2025-01-01')).toMatchObject({
      price: fourOMini,
      matched: 'gpt-4o-mini',
    });
  });

  it('tries the candidates in order, every rule of one before the next, and * last', () => {
    const withFallback = { ...table, '*': fallback };
    // The reported (dated) id wins over the requested name.
    expect(resolvePrice(withFallback, 'gpt-4o-2024-08-06', 'claude-sonnet-4-5')).toMatchObject({
      price: fourO,
    });
    // An unknown reported id falls to the requested name, before '*'.
    expect(resolvePrice(withFallback, 'mystery-model', 'claude-sonnet-4-5')).toMatchObject({
      price: sonnet,
      rule: 'exact',
      id: 'claude-sonnet-4-5',
    });
    expect(resolvePrice(withFallback, 'mystery-model', 'other')).toEqual({
      price: fallback,
      matched: '*',
      rule: 'fallback',
      id: undefined,
    });
    expect(resolvePrice(table, 'mystery-model', 'other')).toBeUndefined();
  });

  it('skips blank and undefined candidates (Azure reports model: "")', () => {
    expect(resolvePrice(table, '', 'gpt-4o')).toMatchObject({ price: fourO, id: 'gpt-4o' });
    expect(resolvePrice(table, '   ', undefined, 'gpt-4o')).toMatchObject({ price: fourO });
    expect(resolvePrice({ '': fallback }, '')).toBeUndefined();
    expect(resolvePrice(table)).toBeUndefined();
  });

  it('reads own entries only, never inherited properties', () => {
    for (const id of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'constructor-2025']) {
      expect(resolvePrice(table, id), id).toBeUndefined();
    }
  });

  it('priceFor keeps its signature: exact, else the new rules, else *', () => {
    expect(priceFor(table, 'gpt-4o')).toBe(fourO);
    expect(priceFor(table, 'claude-sonnet-4-5-20250929')).toBe(sonnet);
    expect(priceFor(table, undefined)).toBeUndefined();
    expect(priceFor({ '*': fallback }, undefined)).toBe(fallback);
    expect(priceFor({ '*': fallback }, 'anything')).toBe(fallback);
  });
});

describe('resolvePrice, for any table and id', () => {
  const separators = ['-', '@', ':'];
  // A small alphabet so keys and ids collide often: separators, digits, letters.
  const part = fc.stringMatching(/^[ab1-2o.]{0,3}$/);
  const key = fc
    .array(fc.tuple(part, fc.constantFrom('', ...separators)), { minLength: 1, maxLength: 3 })
    .map((parts) => parts.map(([text, separator]) => text + separator).join(''))
    .filter((text) => text !== '');
  const stamp = fc.constantFrom('', '-20250929', '-2025-09-29', '@20250929', '-2025', '20250929');
  const table = fc
    .uniqueArray(fc.oneof(key, fc.constant('*')), { maxLength: 6 })
    .map((keys) => Object.fromEntries(keys.map((name, i) => [name, price(i + 1)])) as PriceTable);
  const idFor = (keys: string[]) =>
    fc
      .tuple(
        fc.oneof(key, ...(keys.length > 0 ? [fc.constantFrom(...keys)] : [])),
        fc.constantFrom('', ...separators),
        part,
        stamp,
      )
      .map(([head, separator, tail, date]) => head + separator + tail + date);

  const boundaryPrefix = (candidate: string, id: string) =>
    candidate !== '' &&
    id.startsWith(candidate) &&
    (id.length === candidate.length ||
      (separators.includes(id.charAt(candidate.length)) && /[0-9]/.test(id.charAt(candidate.length + 1))));

  it('matches the exact key, a key that is a prefix of the id at a separator before a digit, or *: never another key', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        table.chain((t) => fc.tuple(fc.constant(t), idFor(Object.keys(t)))),
        ([t, id]) => {
          const resolved = resolvePrice(t, id);
          seen.add(resolved?.rule ?? 'none');
          const keys = Object.keys(t).filter((name) => name !== '*');
          const fits = keys.filter((name) => boundaryPrefix(name, id));
          if (resolved === undefined) {
            expect(fits).toEqual([]);
            expect(Object.hasOwn(t, '*')).toBe(false);
            return;
          }
          expect(Object.hasOwn(t, resolved.matched)).toBe(true);
          expect(resolved.price).toBe(t[resolved.matched]);
          if (resolved.matched === '*') {
            expect(resolved.rule).toBe('fallback');
            expect(fits).toEqual([]);
            return;
          }
          expect(boundaryPrefix(resolved.matched, id)).toBe(true);
          if (Object.hasOwn(t, id)) expect(resolved.matched).toBe(id);
          if (resolved.rule === 'prefix')
            // Longest wins among the boundary prefixes.
            for (const other of fits) expect(other.length).toBeLessThanOrEqual(resolved.matched.length);
        },
      ),
      { numRuns: 2_000 },
    );
    // The generators reach every rule, and ids nothing prices.
    expect([...seen].sort()).toEqual(['exact', 'fallback', 'none', 'prefix', 'undated']);
  });

  it('a key only ever prices ids that extend it at a separator with a date or version', () => {
    fc.assert(
      fc.property(key, key, (name, id) => {
        const resolved = resolvePrice({ [name]: price(1) }, id);
        expect(resolved !== undefined).toBe(boundaryPrefix(name, id));
      }),
      { numRuns: 2_000 },
    );
  });
});
