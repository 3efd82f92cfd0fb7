import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import { seededRandom } from '../testing/seeded-random.js';
import { bootstrapInterval } from './bootstrap-interval.js';
import { distribution } from './distribution.js';
import { quantileOfSorted } from './quantile.js';
import { wilsonInterval } from './wilson-interval.js';

describe('wilsonInterval', () => {
  it('matches the closed form on hand-computed cases', () => {
    // 8/10: centre (0.8 + 1.92073/10)/1.384146 = 0.716723, half 1.959964/1.384146·√(0.016 + 0.009602) = 0.226545
    const [low, high] = wilsonInterval(8, 10);
    expect(low).toBeCloseTo(0.490162, 5);
    expect(high).toBeCloseTo(0.943318, 5);
    // 0/10 does not collapse to a point: [0, z²/(n + z²)].
    const [zeroLow, zeroHigh] = wilsonInterval(0, 10);
    expect(zeroLow).toBe(0);
    expect(zeroHigh).toBeCloseTo(1.959964 ** 2 / (10 + 1.959964 ** 2), 12);
  });

  it('says nothing is known with no trials', () => {
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
  });

  it('holds the observed rate inside [0, 1]', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 500 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        ([successes, n]) => {
          const [low, high] = wilsonInterval(successes, n);
          expect(low).toBeGreaterThanOrEqual(0);
          expect(high).toBeLessThanOrEqual(1);
          expect(low).toBeLessThanOrEqual(successes / n + 1e-12);
          expect(high).toBeGreaterThanOrEqual(successes / n - 1e-12);
        },
      ),
    );
  });

  it('refuses more successes than trials', () => {
    expect(() => wilsonInterval(3, 2)).toThrow(/successes/);
  });
});

describe('quantileOfSorted and distribution', () => {
  it('interpolate linearly between order statistics (type 7)', () => {
    expect(quantileOfSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileOfSorted([10], 0.99)).toBe(10);
    expect(quantileOfSorted([], 0.5)).toBeNaN();
  });

  it('summarizes the tail, not only the mean', () => {
    // h = 4p: p50 → 3; p90 → 4 + 0.6·96 = 61.6; p99 → 4 + 0.96·96 = 96.16.
    const summary = distribution([100, 3, 1, 4, 2]);
    expect(summary.n).toBe(5);
    expect(summary.p50).toBe(3);
    expect(summary.p90).toBeCloseTo(61.6, 10);
    expect(summary.p99).toBeCloseTo(96.16, 10);
    expect(summary.max).toBe(100);
    expect(summary.mean).toBe(22);
  });

  it('gives zeros for no values', () => {
    expect(distribution([])).toEqual({ n: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 });
  });

  it('refuses a value that is not a number', () => {
    let caught: unknown;
    try {
      distribution([1, Number.NaN]);
    } catch (error) {
      caught = error;
    }
    expect(isConfigurationError(caught)).toBe(true);
    expect(caught).toMatchObject({ option: 'values[1]' });
  });

  it('orders its percentiles', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1 }), (values) => {
        const { p50, p90, p99, max } = distribution(values);
        expect(p50).toBeLessThanOrEqual(p90);
        expect(p90).toBeLessThanOrEqual(p99);
        expect(p99).toBeLessThanOrEqual(max);
        expect(max).toBe(Math.max(...values));
      }),
    );
  });
});

describe('bootstrapInterval', () => {
  const values = [0, 0, 1, 1, 1, 0.5, 0.25, 1, 0.75, 1];

  it('is the same for the same seed and brackets the sample mean', () => {
    const first = bootstrapInterval(values, { random: seededRandom(11) });
    const again = bootstrapInterval(values, { random: seededRandom(11) });
    expect(first).toEqual(again);
    const [low, high] = first as [number, number];
    expect(low).toBeLessThan(0.65);
    expect(high).toBeGreaterThan(0.65);
    expect(low).toBeGreaterThanOrEqual(0);
    expect(high).toBeLessThanOrEqual(1);
  });

  it('takes the percentiles of the resampled statistic', () => {
    // A source that always picks the first value: every resample is all zeros.
    expect(bootstrapInterval([0, 5, 9], { random: () => 0, resamples: 10 })).toEqual([0, 0]);
    // A custom statistic is applied to each resample.
    const maxima = bootstrapInterval([1, 2, 3], {
      random: seededRandom(3),
      statistic: (sample) => Math.max(...sample),
    }) as [number, number];
    expect(maxima[0]).toBeGreaterThanOrEqual(1);
    expect(maxima[1]).toBe(3);
  });

  it('narrows with the level', () => {
    const wide = bootstrapInterval(values, { random: seededRandom(5), level: 0.99 }) as [number, number];
    const narrow = bootstrapInterval(values, { random: seededRandom(5), level: 0.5 }) as [number, number];
    expect(wide[0]).toBeLessThanOrEqual(narrow[0]);
    expect(wide[1]).toBeGreaterThanOrEqual(narrow[1]);
  });

  it('is null with nothing to resample, and refuses a bad level', () => {
    expect(bootstrapInterval([], { random: seededRandom(1) })).toBeNull();
    expect(() => bootstrapInterval(values, { random: seededRandom(1), level: 1 })).toThrow(/level/);
    expect(() => bootstrapInterval(values, { random: seededRandom(1), resamples: 0 })).toThrow(/resamples/);
  });
});
