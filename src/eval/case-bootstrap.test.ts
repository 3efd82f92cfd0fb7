import { describe, expect, it } from 'vitest';
import { seededRandom } from '../testing/seeded-random.js';
import { caseBootstrap } from './case-bootstrap.js';
import { wilsonInterval } from './wilson-interval.js';

describe('caseBootstrap', () => {
  it('one case still gets an interval, from resampling its trials', () => {
    const { passRate, passAtK, passHatK } = caseBootstrap([{ n: 10, passes: 6 }], 3, seededRandom(1));
    expect(passRate?.[0]).toBeLessThan(0.6);
    expect(passRate?.[1]).toBeGreaterThan(0.6);
    expect(passHatK?.[0]).toBeLessThan(passHatK?.[1] ?? 0);
    expect(passAtK?.[1]).toBeLessThanOrEqual(1);
  });

  it('cases that always pass or always fail: the by-case interval is wide where Wilson is narrow', () => {
    const cases = [
      { n: 100, passes: 100 },
      { n: 100, passes: 0 },
      { n: 100, passes: 100 },
      { n: 100, passes: 0 },
    ];
    const wilson = wilsonInterval(200, 400);
    const byCase = caseBootstrap(cases, 3, seededRandom(2)).passRate;
    expect(wilson[1] - wilson[0]).toBeLessThan(0.11);
    expect((byCase?.[1] ?? 0) - (byCase?.[0] ?? 0)).toBeGreaterThan(0.4);
  });

  it('is deterministic for a seed, null with no trial, and leaves pass@k null below k trials', () => {
    const cases = [
      { n: 5, passes: 2 },
      { n: 8, passes: 6 },
    ];
    expect(caseBootstrap(cases, 2, seededRandom(3))).toEqual(caseBootstrap(cases, 2, seededRandom(3)));
    expect(caseBootstrap([], 2, seededRandom(3))).toEqual({ passRate: null, passAtK: null, passHatK: null });
    const short = caseBootstrap([{ n: 2, passes: 1 }], 3, seededRandom(3));
    expect(short.passAtK).toBeNull();
    expect(short.passRate).not.toBeNull();
  });
});

describe('caseBootstrap from 30 cases on: the exact moments of the same bootstrap', () => {
  it('agrees with drawing the resamples, within their Monte Carlo error', () => {
    const random = seededRandom(11);
    const cases = Array.from({ length: 60 }, () => {
      const n = 5 + Math.floor(random() * 10);
      return { n, passes: Math.floor(random() * (n + 1)) };
    });
    const moments = caseBootstrap(cases, 3, seededRandom(1));
    const drawn = caseBootstrap(cases, 3, seededRandom(1), {
      normalFromCases: Number.POSITIVE_INFINITY,
      resamples: 20_000,
    });
    for (const figure of ['passRate', 'passAtK', 'passHatK'] as const)
      for (const end of [0, 1])
        expect(moments[figure]?.[end], `${figure}[${end}]`).toBeCloseTo(
          drawn[figure]?.[end] ?? Number.NaN,
          2,
        );
  });
});
