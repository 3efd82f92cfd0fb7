import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import type { ModelRequest } from '../model/model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { type ScriptedTurn, scriptedModel } from '../testing/scripted-model.js';
import {
  type CalibrationSample,
  calibrateJudge,
  type JudgeCalibration,
  neutralPadding,
} from './calibrate-judge.js';
import { defineJudge } from './judge.js';
import { judgeSummary } from './judge-summary.js';

function section(request: ModelRequest, tag: string): string {
  const block = request.messages[0]?.content[0];
  const text = block?.type === 'text' ? block.text : '';
  const match = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(text);
  if (match?.[1] === undefined) throw new Error(`no <${tag}> in the request`);
  return match[1];
}

const modelId = 'judge-2026-01';
const rubric = { version: 'v3', text: 'Pass answers that state the correct refund window.' };

/** A judge whose every call is answered by `decide`. */
function judgeOf<const Label extends string = 'fail' | 'pass'>(
  decide: (request: ModelRequest) => ScriptedTurn,
  scale?: readonly Label[],
) {
  const model = scriptedModel(
    Array.from({ length: 500 }, () => (request: ModelRequest) => ({
      model: modelId,
      usage: { inputTokens: 10, outputTokens: 2 },
      ...decide(request),
    })),
  );
  const options = { id: 'refunds', model, modelId, rubric };
  return { model, judge: defineJudge<Label>(scale === undefined ? options : { ...options, scale }) };
}

const grade = (label: string, quote: string): ScriptedTurn => ({
  toolCalls: [{ name: 'submit_verdict', input: { evidence: [quote], label } }],
});
const pick = (winner: 'first' | 'second', quote: string): ScriptedTurn => ({
  toolCalls: [{ name: 'submit_preference', input: { evidence: [quote], winner } }],
});

/** Pointwise samples: `pass` people-passed answers, then `fail` people-failed ones. */
function pointwise(
  pass: number,
  fail: number,
  answerOf = (i: number) => `Refunds within 30 days (case ${i}).`,
) {
  return Array.from({ length: pass + fail }, (_, i) => ({
    id: `p${i}`,
    question: 'How long is the refund window?',
    answer: answerOf(i),
    humanLabel: i < pass ? ('pass' as const) : ('fail' as const),
  }));
}

describe('calibrateJudge', () => {
  it('shows an always-pass judge at 80 % agreement and κ 0 on an 80/20 set', async () => {
    const { judge } = judgeOf((request) => grade('pass', section(request, 'answer')));
    const clock = fakeClock(1_700_000_000_000);
    const calibration = await calibrateJudge(judge, pointwise(8, 2), { clock });
    expect(calibration).toMatchObject({
      judgeId: 'refunds',
      model: modelId,
      rubricVersion: 'v3',
      at: 1_700_000_000_000,
      n: 10,
      agreement: 0.8,
      weightedKappa: null,
      invalidRate: 0,
      pairwiseN: 0,
      positionFlipRate: null,
      pairwiseAgreement: null,
      verbositySensitivity: 0,
    });
    expect(calibration.kappa).toBeCloseTo(0, 12);
    expect(calibration.confusion).toEqual({
      categories: ['fail', 'pass', '(invalid)'],
      counts: [
        [0, 2, 0],
        [0, 8, 0],
        [0, 0, 0],
      ],
      n: 10,
    });
    expect(calibration.disagreements).toEqual([
      { id: 'p8', humanLabel: 'fail', judgeLabel: 'pass' },
      { id: 'p9', humanLabel: 'fail', judgeLabel: 'pass' },
    ]);
    // Two calls per sample (plain and padded), 10 input and 2 output tokens each.
    expect(calibration.usage).toEqual({
      inputTokens: 200,
      outputTokens: 40,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('gives a position-biased judge a flip rate of 1, every pair inconsistent', async () => {
    const { judge } = judgeOf((request) => pick('first', section(request, 'first')));
    const pairs: CalibrationSample[] = Array.from({ length: 4 }, (_, i) => ({
      id: `pair${i}`,
      question: 'How long is the refund window?',
      a: 'Thirty days.',
      b: 'Some days, depending.',
      humanWinner: i < 3 ? 'a' : 'tie',
    }));
    for (const pair of pairs) if ('a' in pair) expect((await judge.compare(pair)).kind).toBe('inconsistent');
    const calibration = await calibrateJudge(judge, pairs, { clock: fakeClock() });
    expect(calibration.positionFlipRate).toBe(1);
    expect(calibration.pairwiseN).toBe(4);
    // Only the person's tie matches a verdict that did not survive the swap.
    expect(calibration.pairwiseAgreement).toBe(0.25);
    expect(calibration.n).toBe(0);
    expect(calibration.agreement).toBeNull();
    expect(calibration.kappa).toBeNull();
  });

  it('finds no flips in a judge that reads the answers', async () => {
    const { judge } = judgeOf((request) =>
      section(request, 'first').startsWith('Thirty')
        ? pick('first', 'Thirty days.')
        : pick('second', 'Thirty days.'),
    );
    const calibration = await calibrateJudge(
      judge,
      [{ id: 'x', question: 'q', a: 'Some days.', b: 'Thirty days.', humanWinner: 'b' }],
      { clock: fakeClock() },
    );
    expect(calibration).toMatchObject({ positionFlipRate: 0, pairwiseAgreement: 1 });
  });

  it('measures verbosity bias: padding with filler turns short fails into passes', async () => {
    // Passes any answer of 12 words or more, whatever it says.
    const { judge } = judgeOf((request) => {
      const answer = section(request, 'answer');
      return grade(answer.split(/\s+/).length >= 12 ? 'pass' : 'fail', answer.split('\n')[0] as string);
    });
    const answers = (i: number) =>
      i % 2 === 0
        ? 'Thirty days.'
        : 'You can ask for a refund within thirty days of the delivery date, by email.';
    const calibration = await calibrateJudge(judge, pointwise(4, 0, answers), { clock: fakeClock() });
    // The two short answers fail plain and pass padded; the two long ones pass both ways.
    expect(calibration.verbositySensitivity).toBe(0.5);
    expect(calibration.agreement).toBe(0.5);
  });

  it('pads with the given text or function', async () => {
    const { model, judge } = judgeOf((request) => grade('pass', section(request, 'answer')));
    await calibrateJudge(judge, pointwise(1, 0), {
      clock: fakeClock(),
      padding: (answer) => `Well. ${answer}`,
    });
    await calibrateJudge(judge, pointwise(1, 0), { clock: fakeClock() });
    const answers = model.calls.map((request) => section(request, 'answer'));
    expect(answers).toEqual([
      'Refunds within 30 days (case 0).',
      'Well. Refunds within 30 days (case 0).',
      'Refunds within 30 days (case 0).',
      `Refunds within 30 days (case 0).\n\n${neutralPadding}`,
    ]);
  });

  it('counts invalid verdicts as disagreement and as their own column', async () => {
    // Quotes text that is not in the answer on cases 1 and 3.
    const { judge } = judgeOf((request) => {
      const answer = section(request, 'answer');
      return /case [13]/.test(answer) ? grade('pass', 'a sentence never written') : grade('pass', answer);
    });
    const calibration = await calibrateJudge(judge, pointwise(4, 0), { clock: fakeClock() });
    expect(calibration.invalidRate).toBe(0.5);
    expect(calibration.agreement).toBe(0.5);
    expect(calibration.confusion.counts[1]).toEqual([0, 2, 2]);
    expect(calibration.disagreements[0]).toMatchObject({
      humanLabel: 'pass',
      judgeLabel: '(invalid)',
      detail: expect.stringContaining('a sentence never written'),
    });
  });

  it('refuses every verdict from an unpinned model', async () => {
    const model = scriptedModel(
      Array.from({ length: 4 }, () => ({ ...grade('pass', 'x'), model: 'judge-2026-06' })),
    );
    const judge = defineJudge({ id: 'refunds', model, modelId, rubric });
    const calibration = await calibrateJudge(
      judge,
      pointwise(2, 2, () => 'x'),
      { clock: fakeClock() },
    );
    expect(calibration).toMatchObject({ invalidRate: 1, agreement: 0, verbositySensitivity: null });
  });

  it('adds weighted κ on an ordinal scale', async () => {
    // The judge is always one step below the person on poor < fair < good.
    const lower = { good: 'fair', fair: 'poor', poor: 'poor' } as const;
    const { judge } = judgeOf(
      (request) => {
        const answer = section(request, 'answer');
        const person = answer.split(':')[0] as keyof typeof lower;
        return grade(lower[person], answer.split('\n')[0] as string);
      },
      ['poor', 'fair', 'good'],
    );
    const labels = ['poor', 'fair', 'good', 'good'] as const;
    const samples = labels.map((label, i) => ({
      id: `s${i}`,
      question: 'q',
      answer: `${label}: answer ${i}`,
      humanLabel: label,
    }));
    const calibration = await calibrateJudge(judge, samples, { clock: fakeClock() });
    expect(calibration.agreement).toBe(0.25);
    expect(calibration.weightedKappa).not.toBeNull();
    expect(calibration.weightedKappa as number).toBeGreaterThan(calibration.kappa as number);
  });

  it('refuses a human label off the judge’s scale before spending a call', async () => {
    const { model, judge } = judgeOf(() => grade('pass', 'x'));
    const samples = [
      { id: 'ok', question: 'q', answer: 'x', humanLabel: 'pass' },
      { id: 'typo', question: 'q', answer: 'x', humanLabel: 'maybe' },
    ] as unknown as CalibrationSample<'fail' | 'pass'>[];
    const caught = await calibrateJudge(judge, samples, { clock: fakeClock() }).catch(
      (error: unknown) => error,
    );
    expect(isConfigurationError(caught)).toBe(true);
    expect(caught).toMatchObject({ option: 'samples[1].humanLabel' });
    expect(model.calls).toHaveLength(0);
  });

  it('counts a pairwise call without quotes as invalid, outside the flip rate', async () => {
    const { judge } = judgeOf((request) =>
      section(request, 'first') === 'Answer A.'
        ? pick('first', 'nowhere')
        : pick('first', section(request, 'first')),
    );
    const calibration = await calibrateJudge(
      judge,
      [
        { id: 'bad', question: 'q', a: 'Answer A.', b: 'Answer B.', humanWinner: 'a' },
        { id: 'biased', question: 'q', a: 'Answer C.', b: 'Answer D.', humanWinner: 'a' },
      ],
      { clock: fakeClock() },
    );
    expect(calibration).toMatchObject({
      invalidRate: 0.5,
      positionFlipRate: 1,
      pairwiseAgreement: 0,
      pairwiseN: 2,
    });
  });
});

describe('judgeSummary', () => {
  const { judge } = judgeOf(() => grade('pass', 'x'));
  const calibration: JudgeCalibration<'fail' | 'pass'> = {
    judgeId: 'refunds',
    model: modelId,
    rubricVersion: 'v3',
    at: 0,
    n: 60,
    agreement: 0.85,
    kappa: 0.31,
    weightedKappa: null,
    confusion: { categories: ['fail', 'pass', '(invalid)'], counts: [], n: 60 },
    invalidRate: 0,
    pairwiseN: 10,
    pairwiseAgreement: 0.6,
    positionFlipRate: 0.4,
    verbositySensitivity: 0.1,
    disagreements: [],
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  };

  it('warns that an uncalibrated judge is unmeasured', () => {
    expect(judgeSummary(judge, undefined)).toEqual({
      judgeId: 'refunds',
      model: modelId,
      rubricVersion: 'v3',
      kappa: null,
      agreement: null,
      positionFlipRate: null,
      warning: 'judge refunds has no calibration on record: its verdicts are unmeasured',
    });
  });

  it('warns with both numbers when κ is below the threshold', () => {
    expect(judgeSummary(judge, calibration, { minKappa: 0.6 })).toMatchObject({
      kappa: 0.31,
      agreement: 0.85,
      positionFlipRate: 0.4,
      warning: 'judge refunds agrees with people at κ 0.31, below the required 0.60 (raw agreement 0.85)',
    });
  });

  it('has no warning at or above the threshold', () => {
    expect(judgeSummary(judge, { ...calibration, kappa: 0.6 }).warning).toBeNull();
    expect(judgeSummary(judge, calibration, { minKappa: 0.3 }).warning).toBeNull();
  });

  it('treats a calibration of another rubric version or model as none', () => {
    const stale = judgeSummary(judge, { ...calibration, rubricVersion: 'v2' });
    expect(stale.kappa).toBeNull();
    expect(stale.warning).toBe(
      `judge refunds was calibrated as refunds on ${modelId} rubric v2, but runs on ${modelId} rubric v3: its verdicts are unmeasured`,
    );
    expect(judgeSummary(judge, { ...calibration, model: 'judge-2025-09' }).warning).toMatch(/unmeasured/);
  });

  it('warns when κ is undefined', () => {
    expect(judgeSummary(judge, { ...calibration, kappa: null }).warning).toMatch(
      /κ undefined on its 60 calibration samples/,
    );
  });
});
