import { ConfigurationError } from '../errors/reins-error.js';
import { textOf, toolCallsOf } from '../model/content.js';
import type { Model, ModelRequest, ModelResponse } from '../model/model.js';
import type { EscalationTrigger, TriggerSpend, TriggerVerdict } from './escalation-trigger.js';
import { type TriggerThreshold, thresholdValue } from './trigger-threshold.js';

export interface JudgeTriggerOptions {
  /** The model that scores the answer: cheap but not trivial, and not a sibling of the tier it judges. */
  judge: Model;
  /** Escalate when the judge's score is below this (a number, or a calibration's threshold). */
  threshold: number | TriggerThreshold;
  /** The judge's system prompt. @default asks for `{"score": <0..1>}`, how likely the answer is correct and complete */
  instructions?: string;
  /** Reads the score from the judge's answer. @default the first `score` number in its text */
  read?: (judgeResponse: ModelResponse) => number | undefined;
  /** @default 200 */
  maxOutputTokens?: number;
}

const defaultInstructions =
  'You grade one answer to a request. Reply with JSON only: {"score": <number from 0 to 1>}, the probability that the answer is correct and complete.';

/**
 * The last resort (post-06): a model scores the answer, and a low score escalates. Its call is
 * paid: its tokens come back as `spent`, and the cascade bills them beside the tiers'. It inherits
 * the judge's biases (position, length, self-preference): calibrate it on labeled answers.
 *
 * @example
 * import { scriptedModel } from 'reins/testing';
 * const escalate = judgeTrigger({ judge: scriptedModel([{ text: '{"score": 0.9}' }]), threshold: 0.7 });
 */
export function judgeTrigger(options: JudgeTriggerOptions): EscalationTrigger {
  const {
    judge,
    threshold,
    instructions = defaultInstructions,
    read = judgeScore,
    maxOutputTokens = 200,
  } = options;
  const value = thresholdValue(threshold);
  if (!(value >= 0 && value <= 1))
    throw new ConfigurationError('threshold', `must be in [0, 1], got ${String(value)}`);
  return {
    name: 'judge',
    kinds: ['judge'],
    async check({ request, response }): Promise<TriggerVerdict> {
      const judgeRequest: ModelRequest = {
        system: instructions,
        messages: [{ role: 'user', content: [{ type: 'text', text: judgeInput(request, response) }] }],
        tools: [],
        toolChoice: 'none',
        maxOutputTokens,
      };
      if (request.signal) judgeRequest.signal = request.signal;
      const verdict = await judge.generate(judgeRequest);
      const spent: TriggerSpend[] = verdict.usage
        ? [{ model: verdict.model?.trim() ? verdict.model : judge.name, usage: verdict.usage }]
        : [];
      const score = read(verdict);
      const withSpent = <V extends TriggerVerdict>(v: V): V => (spent.length > 0 ? { ...v, spent } : v);
      if (score === undefined || !Number.isFinite(score))
        return withSpent({ kind: 'escalate', trigger: 'judge', reason: 'the judge gave no readable score' });
      if (score < value)
        return withSpent({
          kind: 'escalate',
          trigger: 'judge',
          reason: `judge score ${Math.round(score * 1000) / 1000} below ${value}`,
          score,
        });
      return withSpent({ kind: 'keep', score });
    },
  };
}

function judgeInput(request: ModelRequest, response: ModelResponse): string {
  const last = [...request.messages].reverse().find((message) => message.role === 'user');
  const asked = last ? textOf(last.content) : '';
  const calls = toolCallsOf(response.content).map(
    (call) => `${call.name}(${JSON.stringify(call.input ?? null)})`,
  );
  const answer = [textOf(response.content), ...calls].filter(Boolean).join('\n');
  return `Request:\n${asked}\n\nAnswer:\n${answer}`;
}

const scorePattern = /"?score"?\s*[:=]\s*(-?\d+(?:\.\d+)?)/i;

/** The first `score` number in a judge's text, in [0, 1]. */
export function judgeScore(judgeResponse: ModelResponse): number | undefined {
  const match = scorePattern.exec(textOf(judgeResponse.content));
  if (!match?.[1]) return undefined;
  const score = Number(match[1]);
  return score >= 0 && score <= 1 ? score : undefined;
}
