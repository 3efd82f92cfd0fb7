import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import { meanOverCases, passAtK, passHatK } from './pass-at-k.js';

/** Every k-subset of n trials whose first c passed: the share with ≥ 1 pass, and with all passes. */
function enumerate(n: number, c: number, k: number): { any: number; all: number } {
  let subsets = 0;
  let any = 0;
  let all = 0;
  const visit = (start: number, chosen: number[]) => {
    if (chosen.length === k) {
      subsets++;
      const passes = chosen.filter((trial) => trial < c).length;
      if (passes > 0) any++;
      if (passes === k) all++;
      return;
    }
    for (let trial = start; trial < n; trial++) visit(trial + 1, [...chosen, trial]);
  };
  visit(0, []);
  return { any: any / subsets, all: all / subsets };
}

const trials = fc
  .integer({ min: 1, max: 10 })
  .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: n })));

describe('passAtK and passHatK', () => {
  it('match the published vectors', () => {
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 6);
    expect(passHatK(5, 2, 2)).toBeCloseTo(0.1, 6);
    expect(passAtK(8, 6, 4)).toBeCloseTo(1, 6);
    expect(passHatK(8, 6, 4)).toBeCloseTo(0.214286, 6);
  });

  it('equal the share of k-subsets of the trials that pass, for every small n, c, k', () => {
    fc.assert(
      fc.property(trials, ([n, c, k]) => {
        const exact = enumerate(n, c, k);
        expect(passAtK(n, c, k)).toBeCloseTo(exact.any, 12);
        expect(passHatK(n, c, k)).toBeCloseTo(exact.all, 12);
      }),
    );
  });

  it('are at the extremes when nothing or everything passed', () => {
    expect(passAtK(10, 0, 3)).toBe(0);
    expect(passHatK(10, 0, 3)).toBe(0);
    expect(passAtK(10, 10, 3)).toBe(1);
    expect(passHatK(10, 10, 3)).toBe(1);
  });

  it('stay finite for many trials, where C(n, k) overflows', () => {
    const estimate = passHatK(2000, 1500, 200);
    expect(estimate).toBeGreaterThan(0);
    expect(estimate).toBeLessThan(0.75 ** 200);
    expect(passAtK(2000, 3, 200)).toBeCloseTo(1 - (1800 * 1799 * 1798) / (2000 * 1999 * 1998), 12);
  });

  it('differ from the plug-in (c/n)^k, which overstates pass^k', () => {
    // 2 of 5: drawing 2 without replacement gives (2/5)(1/4) = 0.1; the plug-in says 0.16.
    expect((2 / 5) ** 2).toBeCloseTo(0.16, 12);
    expect(passHatK(5, 2, 2)).not.toBeCloseTo(0.16, 3);
    fc.assert(
      fc.property(trials, ([n, c, k]) => {
        const unbiased = passHatK(n, c, k) as number;
        if (k >= 2 && c > 0 && c < n) expect((c / n) ** k).toBeGreaterThan(unbiased);
        else expect((c / n) ** k).toBeCloseTo(unbiased, 12);
      }),
    );
  });

  it('are null with fewer trials than k', () => {
    expect(passAtK(2, 1, 3)).toBeNull();
    expect(passHatK(0, 0, 1)).toBeNull();
  });

  it.each([
    [-1, 0, 1, 'n'],
    [5, 6, 1, 'c'],
    [5, 2, 0, 'k'],
    [5, 2.5, 1, 'c'],
    [Number.NaN, 0, 1, 'n'],
  ])('refuse n=%s c=%s k=%s with a labeled error', (n, c, k, option) => {
    for (const estimator of [passAtK, passHatK]) {
      let caught: unknown;
      try {
        estimator(n, c, k);
      } catch (error) {
        caught = error;
      }
      expect(isConfigurationError(caught)).toBe(true);
      expect(caught).toMatchObject({ option });
    }
  });
});

describe('meanOverCases', () => {
  it('averages cases that have an estimate, each once', () => {
    expect(meanOverCases([0.1, 0.3, null])).toBeCloseTo(0.2, 12);
    expect(meanOverCases([null])).toBeNull();
    expect(meanOverCases([])).toBeNull();
  });
});
