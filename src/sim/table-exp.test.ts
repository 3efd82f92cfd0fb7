import { describe, expect, it } from 'vitest';
import { simRandom } from './random.js';
import { tableExp } from './table-exp.js';

const ulps = (a: number, b: number) => (a === b ? 0 : Math.abs(a - b) / (Number.EPSILON * Math.abs(b)));

describe('tableExp', () => {
  it('is within 3 ulp of Math.exp over the whole range and where lognormal draws land', () => {
    const random = simRandom(11);
    let worst = 0;
    for (let i = 0; i < 300_000; i++) {
      const x = (random.uniform() - 0.5) * 1_500;
      worst = Math.max(worst, ulps(tableExp(x), Math.exp(x)));
    }
    for (let i = 0; i < 300_000; i++) {
      const x = 6 + 1.3 * random.normal();
      worst = Math.max(worst, ulps(tableExp(x), Math.exp(x)));
    }
    expect(worst).toBeLessThanOrEqual(3);
  });

  it('is Math.exp at the edges', () => {
    for (const x of [
      -1e9,
      -800,
      -745.2,
      -699.5,
      699.5,
      709.7,
      710,
      1e9,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ]) {
      expect(tableExp(x)).toBe(Math.exp(x));
    }
    expect(tableExp(0)).toBe(1);
    expect(tableExp(Number.NaN)).toBeNaN();
  });
});
