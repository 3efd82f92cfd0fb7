import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { topRanked } from './top-ranked.js';

describe('topRanked', () => {
  it('gives the k best, best first, as sorting everything would', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 60 }), fc.nat(70), (values, k) => {
        // Rank by value descending, then by position descending: a strict order over positions.
        const before = (a: number, b: number) =>
          values[a] !== values[b] ? (values[a] as number) > (values[b] as number) : a > b;
        const positions = values.map((_, i) => i);
        const sorted = [...positions].sort((a, b) => (before(a, b) ? -1 : 1));
        expect(topRanked(positions, k, before)).toEqual(sorted.slice(0, k));
      }),
    );
  });

  it('gives nothing for k = 0 or no candidates', () => {
    expect(topRanked([1, 2, 3], 0, (a, b) => a > b)).toEqual([]);
    expect(topRanked([], 3, (a, b) => a > b)).toEqual([]);
  });
});
