import { describe, expect, it } from 'vitest';
import { AliasTable } from './alias-table.js';
import { simRandom } from './random.js';

describe('AliasTable', () => {
  it('draws each outcome at its probability (chi-square over 400,000 draws)', () => {
    const weights = [0.5, 0.25, 0.125, 0.0625, 0.0625, 0];
    const table = new AliasTable(weights);
    const random = simRandom(3);
    const counts = new Array(weights.length).fill(0);
    const draws = 400_000;
    for (let i = 0; i < draws; i++) counts[table.sample(random)] += 1;
    expect(counts[5]).toBe(0);
    let chiSquare = 0;
    for (let i = 0; i < 5; i++) {
      const expected = draws * (weights[i] as number);
      chiSquare += (counts[i] - expected) ** 2 / expected;
    }
    // 4 degrees of freedom: P(χ² > 18.47) = 0.001.
    expect(chiSquare).toBeLessThan(18.47);
  });

  it('handles one outcome and rejects weights that cannot be a distribution', () => {
    expect(new AliasTable([3]).sample(simRandom(1))).toBe(0);
    expect(() => new AliasTable([])).toThrow(RangeError);
    expect(() => new AliasTable([0, 0])).toThrow(RangeError);
    expect(() => new AliasTable([1, Number.NaN])).toThrow(RangeError);
  });
});
