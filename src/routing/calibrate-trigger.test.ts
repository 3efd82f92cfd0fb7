import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import type { ModelRequest, ModelResponse } from '../model/model.js';
import { fakeClock, fakeClockEpoch } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { seededRandom } from '../testing/seeded-random.js';
import { calibrateTrigger, type LabeledSample } from './calibrate-trigger.js';
import { checkTrigger } from './check-trigger.js';
import { confidenceTrigger } from './confidence-trigger.js';
import { anyTrigger } from './escalation-trigger.js';
import { judgeTrigger } from './judge-trigger.js';
import { structuralTrigger } from './structural-trigger.js';

const request: ModelRequest = { system: '', messages: [], tools: [], toolChoice: 'none' };
const answer = (text: string): ModelResponse => ({
  content: [{ type: 'text', text }],
  stopReason: 'end_turn',
});

/** Ten samples: confidences 0.05…0.95; the four lowest are wrong (need escalating), one at 0.65 too. */
function samples(): LabeledSample[] {
  return Array.from({ length: 10 }, (_, i) => {
    const confidence = 0.05 + i * 0.1;
    return {
      id: `s${i}`,
      request,
      response: answer(`{"answer": "x", "confidence": ${confidence.toFixed(2)}}`),
      needsEscalation: i < 4 || i === 6,
      strongCorrect: i !== 9,
      cheapCost: 1,
      strongCost: 15,
      cheapLatencyMs: 100,
      strongLatencyMs: 400 + i,
    };
  });
}

describe('calibrateTrigger', () => {
  it('picks the lowest threshold meeting the misroute target, with the confusion matrix and savings', async () => {
    const clock = fakeClock();
    const calibration = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), samples(), {
      targetMisrouteRate: 0.1,
      bound: 'point',
      random: seededRandom(1),
      clock,
    });
    expect(calibration.kind).toBe('met');
    if (calibration.kind !== 'met') return;
    // Escalating below 0.4 leaves one misroute (0.65) of ten: exactly the target.
    expect(calibration.threshold.value).toBeCloseTo(0.4, 12);
    expect(calibration.confusion).toEqual({ escalatedHard: 4, escalatedEasy: 0, keptHard: 1, keptEasy: 5 });
    expect(calibration.misrouteRate.estimate).toBe(0.1);
    // Ten cheap calls plus four strong ones, against ten strong: 1 − 70/150.
    expect(calibration.savings.estimate).toBeCloseTo(1 - 70 / 150, 12);
    expect(calibration.latencyPenaltyMs.mean).toBe(100);
    expect(calibration.threshold).toMatchObject({
      fittedOn: { size: 10, ids: ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'] },
      fittedAtMs: fakeClockEpoch,
      targetMisrouteRate: 0.1,
      escalationRate: { estimate: 0.4 },
    });
  });

  it('a stricter target escalates more; the upper bound is stricter than the point', async () => {
    const options = { random: seededRandom(1) };
    const strict = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), samples(), {
      ...options,
      targetMisrouteRate: 0,
      bound: 'point',
    });
    expect(strict.kind === 'met' && strict.threshold.value).toBeCloseTo(0.7, 12);
    const upper = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), samples(), {
      ...options,
      targetMisrouteRate: 0.1,
    });
    // Ten samples cannot show a misroute rate ≤ 10 % at 95 %: even zero misroutes bounds it at 0.28.
    expect(upper.kind).toBe('unmet');
  });

  it('targets accuracy loss against all-strong, counting the strong tier’s own errors', async () => {
    const calibration = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), samples(), {
      targetAccuracyLoss: 0,
      bound: 'point',
      random: seededRandom(1),
    });
    // Keeping 0.65 (wrong, strong right: −1) is paid back by keeping 0.95 (right, strong wrong: +1).
    expect(calibration.kind === 'met' && calibration.threshold.value).toBeCloseTo(0.4, 12);
    expect(calibration.accuracyLoss?.estimate).toBe(0);
  });

  it('a structural failure escalates whatever the threshold', async () => {
    const withBroken = samples();
    withBroken[6] = { ...(withBroken[6] as LabeledSample), response: answer('not json, confidence: 0.65') };
    const trigger = anyTrigger(
      structuralTrigger({
        textSchema: {
          '~standard': { version: 1, vendor: 't', validate: (value) => ({ value }) },
        },
      }),
      confidenceTrigger({ threshold: 0.5 }),
    );
    const calibration = await calibrateTrigger(trigger, withBroken, {
      targetMisrouteRate: 0,
      bound: 'point',
      random: seededRandom(1),
    });
    expect(calibration.kind === 'met' && calibration.threshold.value).toBeCloseTo(0.4, 12);
    expect(calibration.confusion.escalatedHard).toBe(5);
  });

  it('refuses two scored triggers at once, no target, and accuracy loss without strong labels', async () => {
    const judge = judgeTrigger({ judge: scriptedModel([]), threshold: 0.5 });
    const both = anyTrigger(confidenceTrigger({ threshold: 0.5 }), judge);
    const random = seededRandom(1);
    for (const attempt of [
      calibrateTrigger(both, samples(), { targetMisrouteRate: 0.1, random }),
      calibrateTrigger(judge, samples(), { random }),
      calibrateTrigger(judge, [{ ...(samples()[0] as LabeledSample), strongCorrect: undefined as never }], {
        targetAccuracyLoss: 0.01,
        random,
      }),
    ])
      expect(isConfigurationError(await attempt.catch((error: unknown) => error))).toBe(true);
  });
});

describe('checkTrigger', () => {
  const threshold = {
    value: 0.8,
    fittedOn: { size: 1000, fingerprint: 'abc' },
    fittedAtMs: fakeClockEpoch,
    escalationRate: { estimate: 0.4, interval: [0.37, 0.43] as [number, number] },
    targetMisrouteRate: 0.01,
  };
  const day = 86_400_000;

  it('is ok when young and in band', () => {
    const clock = fakeClock(fakeClockEpoch + 10 * day);
    expect(
      checkTrigger(threshold, { maxAgeMs: 30 * day, clock, production: { requests: 1000, escalated: 410 } }),
    ).toEqual({
      kind: 'ok',
      ageMs: 10 * day,
    });
  });

  it('reports a stale calibration and an escalation rate out of its band', () => {
    const clock = fakeClock(fakeClockEpoch + 31 * day);
    const check = checkTrigger(threshold, {
      maxAgeMs: 30 * day,
      clock,
      production: { requests: 1000, escalated: 800 },
    });
    expect(check.kind === 'findings' && check.findings.map((finding) => finding.kind)).toEqual([
      'stale',
      'escalation_drift',
    ]);
  });

  it('does not call a small sample drift when its interval still overlaps the band', () => {
    const clock = fakeClock(fakeClockEpoch);
    // 6 of 10 is far from 0.4, but ten requests cannot tell.
    expect(
      checkTrigger(threshold, { maxAgeMs: day, clock, production: { requests: 10, escalated: 6 } }).kind,
    ).toBe('ok');
  });
});
