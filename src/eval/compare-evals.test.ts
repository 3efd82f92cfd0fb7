import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../testing/scripted-model.js';
import { compareEvals } from './compare-evals.js';
import type { EvalSuite } from './eval-types.js';
import { runEval } from './run-eval.js';

/** A suite whose model answers right with the given odds per case, drawn from the trial's seed. */
function suite(name: string, odds: (caseIndex: number) => number, costScale = 1): EvalSuite {
  return {
    name,
    cases: Array.from({ length: 20 }, (_, index) => ({
      id: `case-${index}`,
      input: `question ${index}`,
      expect: ({ answer }) => answer === 'right',
    })),
    agent: ({ caseId, random }) => {
      const index = Number(caseId.slice(5));
      const right = random() < odds(index);
      return {
        model: scriptedModel(
          [{ text: right ? 'right' : 'wrong', usage: { outputTokens: 100 * costScale } }],
          {
            name: 'm',
          },
        ),
        prices: { m: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 10 } },
      };
    },
  };
}

describe('compareEvals', () => {
  it('the same configuration twice is within noise, with nothing discordant', async () => {
    const a = await runEval(
      suite('a', () => 0.6),
      { trials: 10 },
    );
    const b = await runEval(
      suite('b', () => 0.6),
      { trials: 10 },
    );
    const comparison = compareEvals(a, b);
    expect(comparison.pairs).toBe(200);
    expect(comparison.passRate.discordant).toEqual({ baselineOnly: 0, candidateOnly: 0 });
    expect(comparison.passRate.withinNoise).toBe(true);
    expect(comparison.verdict).toMatch(/^this change is within noise/);
  });

  it('a real improvement is found; cost is a paired difference', async () => {
    const a = await runEval(
      suite('a', () => 0.4),
      { trials: 10 },
    );
    const b = await runEval(
      suite('b', () => 0.9, 2),
      { trials: 10 },
    );
    const comparison = compareEvals(a, b);
    expect(comparison.passRate.withinNoise).toBe(false);
    expect(comparison.passRate.difference).toBeGreaterThan(0.3);
    // Same seeds: the candidate never breaks a trial the baseline passed (its odds are higher).
    expect(comparison.passRate.discordant.baselineOnly).toBe(0);
    expect(comparison.verdict).toMatch(/^the candidate passes more/);
    expect(comparison.costUsd.meanDifference).toBeCloseTo(0.001, 6);
    expect(comparison.costP99.delta).toBeGreaterThan(0);
  });

  it('a small change on few trials is reported as noise, not as a win', async () => {
    const a = await runEval(
      suite('a', () => 0.5),
      { trials: 3 },
    );
    const b = await runEval(
      suite('b', (index) => (index === 0 ? 0.9 : 0.5)),
      { trials: 3 },
    );
    expect(compareEvals(a, b).passRate.withinNoise).toBe(true);
  });

  it('refuses reports run on different seeds, and leaves unpaired trials out', async () => {
    const a = await runEval(
      suite('a', () => 0.5),
      { trials: 4, seed: 1 },
    );
    const b = await runEval(
      suite('b', () => 0.5),
      { trials: 4, seed: 2 },
    );
    expect(() => compareEvals(a, b)).toThrow('trials pair only on the same seed');
    const longer = await runEval(
      suite('c', () => 0.5),
      { trials: 6, seed: 1 },
    );
    const comparison = compareEvals(a, longer);
    expect(comparison.pairs).toBe(80);
    expect(comparison.unpaired).toBe(40);
  });
});

describe('compareEvals, by case', () => {
  it('a change confined to one case of five is within noise, however many of its trials flipped', async () => {
    const a = await runEval(
      suite('a', () => 0),
      { trials: 10, cases: ['case-0', 'case-1', 'case-2', 'case-3', 'case-4'] },
    );
    const b = await runEval(
      suite('b', (index) => (index === 0 ? 1 : 0)),
      {
        trials: 10,
        cases: ['case-0', 'case-1', 'case-2', 'case-3', 'case-4'],
      },
    );
    const comparison = compareEvals(a, b);
    // Trial by trial it looks certain (10 fixed, 0 broken)...
    expect(comparison.passRate.withinNoise).toBe(false);
    // ...but over cases the interval holds 0.
    expect(comparison.byCase?.differenceCi95?.[0]).toBe(0);
    expect(comparison.withinNoise).toBe(true);
    expect(comparison.verdict).toMatch(/^this change is within noise.*by case/);
  });

  it('refuses two reports that hold the same runs, and prints the p99 the report prints', async () => {
    const a = await runEval(
      suite('a', () => 0.5),
      { trials: 4 },
    );
    expect(() => compareEvals(a, a)).toThrow(/the same run ids/);
    const b = await runEval(
      suite('b', () => 0.5),
      { trials: 4 },
    );
    expect(compareEvals(a, b).costP99.baseline).toBe(a.summary.cost.p99);
  });
});
