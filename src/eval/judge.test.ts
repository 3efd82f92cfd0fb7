import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../model/model.js';
import { type ScriptedTurn, scriptedModel } from '../testing/scripted-model.js';
import { defineJudge } from './judge.js';

/** The text between `<tag>` and `</tag>` in the request the judge sent. */
function section(request: ModelRequest, tag: string): string {
  const block = request.messages[0]?.content[0];
  const text = block?.type === 'text' ? block.text : '';
  const match = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(text);
  if (match?.[1] === undefined) throw new Error(`no <${tag}> in the request`);
  return match[1];
}

/** A judge model that answers every call with `decide(request)`, from model `judge-2026-01`. */
function judgeModel(decide: (request: ModelRequest) => ScriptedTurn, calls = 400) {
  return scriptedModel(
    Array.from({ length: calls }, () => (request: ModelRequest) => ({
      model: 'judge-2026-01',
      ...decide(request),
    })),
  );
}

function verdict(label: string, evidence: unknown): ScriptedTurn {
  return { toolCalls: [{ name: 'submit_verdict', input: { evidence, label } }] };
}

function preference(winner: 'first' | 'second', evidence: string[]): ScriptedTurn {
  return { toolCalls: [{ name: 'submit_preference', input: { evidence, winner } }] };
}

const rubric = { version: 'v1', text: 'Pass when the answer gives the correct refund window.' };
const question = 'How long do I have to ask for a refund?';
const answer = 'You have 30 days from delivery.\nAfter that,   store credit only.';

function judgeWith(decide: (request: ModelRequest) => ScriptedTurn) {
  const model = judgeModel(decide);
  return { model, judge: defineJudge({ id: 'refund-window', model, modelId: 'judge-2026-01', rubric }) };
}

describe('judge.grade', () => {
  it('returns the label and the quotes, asking through a forced tool call', async () => {
    const { model, judge } = judgeWith((request) =>
      verdict('pass', [section(request, 'answer').split('\n')[0]]),
    );
    const grade = await judge.grade({ question, answer, reference: '30 days' });
    expect(grade).toMatchObject({
      kind: 'verdict',
      label: 'pass',
      evidence: ['You have 30 days from delivery.'],
    });
    expect(grade.usage.outputTokens).toBeGreaterThan(0);
    const [request] = model.calls;
    expect(request?.toolChoice).toEqual({ name: 'submit_verdict' });
    expect(request?.tools[0]?.inputSchema).toMatchObject({
      properties: { label: { enum: ['fail', 'pass'] } },
    });
    expect(request?.system).toContain(rubric.text);
    expect(section(request as ModelRequest, 'reference')).toBe('30 days');
    expect(request?.maxOutputTokens).toBe(1024);
  });

  it('accepts quotes that differ from the answer only in whitespace', async () => {
    const { judge } = judgeWith(() => verdict('pass', ['After that, store\ncredit only.']));
    expect((await judge.grade({ question, answer })).kind).toBe('verdict');
  });

  it('refuses a verdict whose quote is not in the answer', async () => {
    const { judge } = judgeWith(() => verdict('pass', ['You have 60 days from delivery.']));
    expect(await judge.grade({ question, answer })).toMatchObject({
      kind: 'invalid',
      reason: 'evidence_not_found',
      detail: expect.stringContaining('60 days'),
    });
  });

  it('refuses a verdict that quotes nothing, or only blanks', async () => {
    const empty = judgeWith(() => verdict('pass', []));
    expect(await empty.judge.grade({ question, answer })).toMatchObject({
      kind: 'invalid',
      reason: 'no_evidence',
    });
    const blank = judgeWith(() => verdict('pass', ['   ']));
    expect(await blank.judge.grade({ question, answer })).toMatchObject({ reason: 'no_evidence' });
    // A quote too short to say anything ("." or "a" occur in any answer) is no evidence either.
    const dot = judgeWith(() => verdict('pass', ['.']));
    expect(await dot.judge.grade({ question, answer })).toMatchObject({ reason: 'no_evidence' });
  });

  it('refuses an answer from a model other than the pinned one', async () => {
    const model = scriptedModel([{ ...verdict('pass', ['30 days']), model: 'judge-2026-06' }]);
    const judge = defineJudge({ id: 'refund-window', model, modelId: 'judge-2026-01', rubric });
    expect(await judge.grade({ question, answer })).toMatchObject({
      kind: 'invalid',
      reason: 'model_mismatch',
      detail: 'answered by "judge-2026-06", pinned "judge-2026-01"',
    });
  });

  it('turns model errors and garbage into labeled invalid verdicts, never a throw', async () => {
    const cases: [ScriptedTurn, string][] = [
      [{ throws: new Error('503 overloaded') }, 'model_error'],
      [{ text: 'I think it passes.' }, 'no_verdict'],
      [{ toolCalls: [{ name: 'submit_verdict', inputText: '{"label": "pa' }] }, 'malformed_verdict'],
      [verdict('pass', '30 days'), 'malformed_verdict'],
      [verdict('excellent', ['30 days']), 'unknown_label'],
      [
        {
          toolCalls: [
            ...(verdict('pass', ['30 days']).toolCalls ?? []),
            ...(verdict('fail', ['30 days']).toolCalls ?? []),
          ],
        },
        'malformed_verdict',
      ],
    ];
    for (const [turn, reason] of cases) {
      const { judge } = judgeWith(() => turn);
      expect(await judge.grade({ question, answer })).toMatchObject({ kind: 'invalid', reason });
    }
  });

  it('rethrows when the caller aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const { judge } = judgeWith(() => verdict('pass', ['30 days']));
    await expect(judge.grade({ question, answer, signal: controller.signal })).rejects.toThrow('stop');
  });

  it('grades on an ordinal scale it was given', async () => {
    const model = judgeModel(() => verdict('good', ['30 days']));
    const judge = defineJudge({
      id: 'q',
      model,
      modelId: 'judge-2026-01',
      rubric,
      scale: ['poor', 'fair', 'good'],
    });
    const grade = await judge.grade({ question, answer });
    if (grade.kind === 'verdict') {
      const label: 'poor' | 'fair' | 'good' = grade.label;
      expect(label).toBe('good');
    } else expect.unreachable();
  });

  it('refuses invalid options', () => {
    const model = judgeModel(() => verdict('pass', ['x']));
    const base = { id: 'j', model, modelId: 'm', rubric };
    expect(() => defineJudge({ ...base, scale: ['pass'] })).toThrow(/scale/);
    expect(() => defineJudge({ ...base, scale: ['a', 'a'] })).toThrow(/scale/);
    expect(() => defineJudge({ ...base, modelId: ' ' })).toThrow(/modelId/);
    expect(() => defineJudge({ ...base, rubric: { version: '', text: 'x' } })).toThrow(/rubric.version/);
    expect(() => defineJudge({ ...base, maxOutputTokens: 0 })).toThrow(/maxOutputTokens/);
  });
});

describe('judge.compare', () => {
  const a = 'Refunds within 30 days of delivery.';
  const b = 'Refunds are possible; check the policy page for the exact terms and conditions.';

  it('prefers an answer only when both orders pick it', async () => {
    // Picks whichever shown answer mentions "30 days", wherever it is shown.
    const { model, judge } = judgeWith((request) =>
      section(request, 'first').includes('30 days')
        ? preference('first', ['30 days'])
        : preference('second', ['30 days']),
    );
    const comparison = await judge.compare({ question, a, b });
    expect(comparison).toMatchObject({ kind: 'preferred', winner: 'a', evidence: ['30 days', '30 days'] });
    expect(model.calls).toHaveLength(2);
    expect(section(model.calls[0] as ModelRequest, 'first')).toBe(a);
    expect(section(model.calls[1] as ModelRequest, 'first')).toBe(b);
  });

  it('calls a position-biased pick inconsistent, and bills both calls', async () => {
    const { judge } = judgeWith((request) => ({
      ...preference('first', [section(request, 'first')]),
      usage: { inputTokens: 100, outputTokens: 7 },
    }));
    const comparison = await judge.compare({ question, a, b });
    expect(comparison).toMatchObject({ kind: 'inconsistent', firstOrder: 'a', secondOrder: 'b' });
    expect(comparison.usage).toEqual({
      inputTokens: 200,
      outputTokens: 14,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('refuses a pick that quotes neither answer, saying which order', async () => {
    let call = 0;
    const { judge } = judgeWith(() =>
      ++call === 1 ? preference('first', ['30 days']) : preference('second', ['ninety days']),
    );
    expect(await judge.compare({ question, a, b })).toMatchObject({
      kind: 'invalid',
      reason: 'evidence_not_found',
      order: 'b_first',
    });
  });
});

describe('pairwise evidence', () => {
  it('a pick that quotes only the answer it did not pick is invalid', async () => {
    const { scriptedModel: model } = await import('../testing/scripted-model.js');
    const judge = defineJudge({
      id: 'pairs',
      modelId: 'judge-1',
      rubric: { version: '1', text: 'Prefer the correct answer.' },
      model: model(
        [
          {
            model: 'judge-1',
            toolCalls: [
              {
                name: 'submit_preference',
                input: { winner: 'first', evidence: ['refund window is 30 days'] },
              },
            ],
          },
        ],
        { name: 'judge-1' },
      ),
    });
    const result = await judge.compare({
      question: 'How long is the refund window?',
      a: 'It is two weeks.',
      b: 'The refund window is 30 days.',
    });
    expect(result).toMatchObject({
      kind: 'invalid',
      reason: 'evidence_not_found',
      detail: 'the verdict picked "first" but quoted nothing from it',
    });
  });
});
