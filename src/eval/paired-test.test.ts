import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../testing/seeded-random.js';
import { comparePaired, pairedDelta } from './paired-test.js';

/** Baseline and candidate results with the given cell counts. */
function table(cells: { both: number; candidateOnly: number; baselineOnly: number; neither: number }) {
  const baseline: boolean[] = [];
  const candidate: boolean[] = [];
  const add = (times: number, base: boolean, cand: boolean) => {
    for (let i = 0; i < times; i++) {
      baseline.push(base);
      candidate.push(cand);
    }
  };
  add(cells.both, true, true);
  add(cells.candidateOnly, false, true);
  add(cells.baselineOnly, true, false);
  add(cells.neither, false, false);
  return { baseline, candidate };
}

/** 2·P(X ≤ k) for X ~ Binomial(m, ½), exactly, capped at 1. */
function exactTwoSided(k: number, m: number): number {
  let coefficient = 1n;
  let tail = 0n;
  for (let i = 0; i <= k; i++) {
    tail += coefficient;
    coefficient = (coefficient * BigInt(m - i)) / BigInt(i + 1);
  }
  return Math.min(1, Number(2n * tail) / 2 ** m);
}

describe('comparePaired', () => {
  it('gives the exact McNemar p for 9 discordant pairs against 1', () => {
    // 2·(C(10,0) + C(10,1))/2¹⁰ = 22/1024.
    const { baseline, candidate } = table({ both: 30, candidateOnly: 9, baselineOnly: 1, neither: 5 });
    const result = comparePaired(baseline, candidate);
    expect(result.pValue).toBeCloseTo(0.021484375, 12);
    expect(result.discordant).toEqual({ baselineOnly: 1, candidateOnly: 9 });
    expect(result.withinNoise).toBe(false);
    expect(comparePaired(baseline, candidate, { alpha: 0.01 }).withinNoise).toBe(true);
  });

  it('matches Newcombe’s paired interval on a published table', () => {
    // Cavo et al. 2012 (Fagerland, Lydersen & Laake, ch. 8): 59 both, 6 first only, 16 second only, 80 neither.
    // Estimate −10/161 = −0.0621, 95 % CI −0.1186 to −0.0046. McNemar: 2·Σ_{i≤6} C(22, i)/2²² = 220112/4194304.
    const { baseline, candidate } = table({ both: 59, candidateOnly: 6, baselineOnly: 16, neither: 80 });
    const result = comparePaired(baseline, candidate);
    expect(result.n).toBe(161);
    expect(result.baselineRate).toBeCloseTo(75 / 161, 12);
    expect(result.candidateRate).toBeCloseTo(65 / 161, 12);
    expect(result.difference).toBeCloseTo(-0.0621, 4);
    expect(result.differenceCi95[0]).toBeCloseTo(-0.1186, 4);
    expect(result.differenceCi95[1]).toBeCloseTo(-0.0046, 4);
    expect(result.pValue).toBeCloseTo(220112 / 4194304, 12);
    expect(result.withinNoise).toBe(true);
  });

  it('agrees with exact binomial arithmetic for every split of up to 40 discordant pairs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 40 }),
        (candidateOnly, baselineOnly) => {
          const { baseline, candidate } = table({ both: 3, candidateOnly, baselineOnly, neither: 2 });
          const expected = exactTwoSided(Math.min(candidateOnly, baselineOnly), candidateOnly + baselineOnly);
          expect(comparePaired(baseline, candidate).pValue).toBeCloseTo(expected, 12);
        },
      ),
    );
  });

  it('keeps thousands of discordant pairs finite', () => {
    const even = table({ both: 0, candidateOnly: 1500, baselineOnly: 1500, neither: 0 });
    expect(comparePaired(even.baseline, even.candidate).pValue).toBe(1);
    const lopsided = table({ both: 0, candidateOnly: 2000, baselineOnly: 1000, neither: 0 });
    const p = comparePaired(lopsided.baseline, lopsided.candidate).pValue;
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-60);
  });

  it('calls identical results noise', () => {
    const { baseline, candidate } = table({ both: 4, candidateOnly: 0, baselineOnly: 0, neither: 4 });
    const result = comparePaired(baseline, candidate);
    expect(result.pValue).toBe(1);
    expect(result.difference).toBe(0);
    expect(result.withinNoise).toBe(true);
    expect(result.differenceCi95[0]).toBeLessThan(0);
    expect(result.differenceCi95[1]).toBeGreaterThan(0);
  });

  it('holds the difference inside its interval, within [−1, 1]', () => {
    const count = fc.integer({ min: 0, max: 30 });
    fc.assert(
      fc.property(count, count, count, count, (both, candidateOnly, baselineOnly, neither) => {
        fc.pre(both + candidateOnly + baselineOnly + neither > 0);
        const { baseline, candidate } = table({ both, candidateOnly, baselineOnly, neither });
        const { difference, differenceCi95 } = comparePaired(baseline, candidate);
        expect(differenceCi95[0]).toBeGreaterThanOrEqual(-1);
        expect(differenceCi95[1]).toBeLessThanOrEqual(1);
        expect(differenceCi95[0]).toBeLessThanOrEqual(difference + 1e-12);
        expect(differenceCi95[1]).toBeGreaterThanOrEqual(difference - 1e-12);
      }),
    );
  });

  it('refuses unpaired input and a bad alpha', () => {
    expect(() => comparePaired([true], [])).toThrow(/one result per baseline case/);
    expect(() => comparePaired([], [], { alpha: 0 })).toThrow(/alpha/);
  });
});

describe('pairedDelta', () => {
  it('gives the mean paired difference and a reproducible interval', () => {
    const baseline = [0.012, 0.02, 0.015, 0.018, 0.011];
    const candidate = [0.01, 0.019, 0.011, 0.016, 0.012];
    const first = pairedDelta(baseline, candidate, { random: seededRandom(9) });
    expect(first.n).toBe(5);
    expect(first.meanDifference).toBeCloseTo(-0.0016, 12);
    expect(first).toEqual(pairedDelta(baseline, candidate, { random: seededRandom(9) }));
    const [low, high] = first.differenceCi95 as [number, number];
    expect(low).toBeGreaterThanOrEqual(-0.004);
    expect(high).toBeLessThanOrEqual(0.001);
    expect(low).toBeLessThan(first.meanDifference);
    expect(high).toBeGreaterThan(first.meanDifference);
  });

  it('has no interval with no pairs', () => {
    const empty = pairedDelta([], [], { random: seededRandom(1), resamples: 10 });
    expect(empty.n).toBe(0);
    expect(empty.differenceCi95).toBeNull();
  });
});
