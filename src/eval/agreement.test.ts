import { describe, expect, it } from 'vitest';
import { cohensKappa, confusionMatrix, weightedKappa } from './agreement.js';

const repeat = <T>(value: T, times: number): T[] => Array.from({ length: times }, () => value);

describe('confusionMatrix', () => {
  it('counts rows by a and columns by b, in the given order', () => {
    const matrix = confusionMatrix(
      ['pass', 'fail', 'pass', 'fail'],
      ['pass', 'pass', 'pass', 'fail'],
      ['fail', 'pass'],
    );
    expect(matrix).toEqual({
      categories: ['fail', 'pass'],
      counts: [
        [1, 1],
        [0, 2],
      ],
      n: 4,
    });
  });

  it('orders categories by first appearance when none are given', () => {
    expect(confusionMatrix(['b', 'a'], ['c', 'a']).categories).toEqual(['b', 'a', 'c']);
  });

  it('refuses labels outside the categories and unequal lengths', () => {
    expect(() => confusionMatrix(['pass'], ['maybe'], ['fail', 'pass'])).toThrow(/b\[0\].*maybe/);
    expect(() => confusionMatrix(['pass'], [])).toThrow(/one label per item/);
  });
});

describe('cohensKappa', () => {
  it('gives an always-pass judge 80 % agreement with an 80/20 human split, and κ 0', () => {
    const human = [...repeat('pass', 80), ...repeat('fail', 20)];
    const judge = repeat('pass', 100);
    const agreement = human.filter((label, i) => label === judge[i]).length / human.length;
    expect(agreement).toBe(0.8);
    expect(cohensKappa(human, judge)).toBeCloseTo(0, 12);
  });

  it("reproduces post-16's worked example: 84 % agreement at an 80/20 split on both sides is κ 0.50", () => {
    // Both pass 80 of 100 and agree on 84: 72 pass/pass, 12 fail/fail, 8 each way apart.
    const human = [...repeat('pass', 72), ...repeat('pass', 8), ...repeat('fail', 8), ...repeat('fail', 12)];
    const judge = [...repeat('pass', 72), ...repeat('fail', 8), ...repeat('pass', 8), ...repeat('fail', 12)];
    expect(cohensKappa(human, judge)).toBeCloseTo(0.5, 12);
  });

  it('matches a textbook 2×2', () => {
    // 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15.
    // p_o = 35/50 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
    const a = [...repeat('yes', 25), ...repeat('no', 25)];
    const b = [...repeat('yes', 20), ...repeat('no', 5), ...repeat('yes', 10), ...repeat('no', 15)];
    expect(cohensKappa(a, b)).toBeCloseTo(0.4, 12);
  });

  it('is 1 for perfect agreement on varied labels and negative for systematic disagreement', () => {
    expect(cohensKappa(['a', 'b', 'a'], ['a', 'b', 'a'])).toBe(1);
    expect(cohensKappa(['a', 'b'], ['b', 'a'])).toBe(-1);
  });

  it('is null when undefined: no items, or one label everywhere (p_e = 1)', () => {
    expect(cohensKappa([], [])).toBeNull();
    expect(cohensKappa(['pass', 'pass'], ['pass', 'pass'])).toBeNull();
  });
});

describe('weightedKappa', () => {
  // Rows a, columns b over low < mid < high, n = 6:
  //   low  [1 1 0]   row totals 2 2 2, column totals 1 3 2, expected cell = 2·column/6.
  //   mid  [0 1 1]   Observed misses are three one-step misses.
  //   high [0 1 1]
  // Linear (w = d/2): observed 3·½ = 1.5; expected ½·(1 + ⅓ + ⅔ + 1) + 1·(⅔ + ⅓) = 2.5 → κ = 1 − 1.5/2.5 = 0.4.
  // Quadratic (w = (d/2)²): observed 0.75; expected ¼·3 + 1 = 1.75 → κ = 1 − 3/7 = 4/7.
  // Unweighted: p_o = 0.5, p_e = (2 + 6 + 4)/36 = ⅓ → κ = 0.25.
  const categories = ['low', 'mid', 'high'] as const;
  const a = ['low', 'low', 'mid', 'mid', 'high', 'high'] as const;
  const b = ['low', 'mid', 'mid', 'high', 'high', 'mid'] as const;

  it('credits near misses on an ordinal scale', () => {
    expect(weightedKappa(a, b, { categories, weights: 'linear' })).toBeCloseTo(0.4, 12);
    expect(weightedKappa(a, b, { categories, weights: 'quadratic' })).toBeCloseTo(4 / 7, 12);
    expect(weightedKappa(a, b, { categories })).toBeCloseTo(4 / 7, 12);
    expect(cohensKappa(a, b)).toBeCloseTo(0.25, 12);
  });

  it('equals Cohen’s κ on two categories', () => {
    const human = ['pass', 'pass', 'fail', 'pass', 'fail', 'fail', 'pass'];
    const judge = ['pass', 'fail', 'fail', 'pass', 'pass', 'fail', 'pass'];
    expect(weightedKappa(human, judge, { categories: ['fail', 'pass'] })).toBeCloseTo(
      cohensKappa(human, judge) as number,
      12,
    );
  });
});
