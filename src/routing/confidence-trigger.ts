import { ConfigurationError } from '../errors/reins-error.js';
import { textOf } from '../model/content.js';
import type { ModelResponse } from '../model/model.js';
import type { EscalationTrigger, TriggerVerdict } from './escalation-trigger.js';
import { type TriggerThreshold, thresholdValue } from './trigger-threshold.js';

export interface ConfidenceTriggerOptions {
  /**
   * Escalate below this. A bare number is an uncalibrated guess (the trace says so); pass the
   * `threshold` of a `calibrateTrigger` result: fitted on labeled data for this task, model and
   * prompt (post-06: "not 0.5 by default").
   */
  threshold: number | TriggerThreshold;
  /**
   * Reads the confidence in [0, 1] from an answer: a self-report, or a mean token probability from
   * logprobs your adapter kept. `undefined` (nothing readable) escalates.
   * @default selfReportedConfidence
   */
  read?: (response: ModelResponse) => number | undefined;
}

/**
 * Escalates an answer whose confidence is below the threshold. The score is a ranking signal, not
 * a probability, until a calibration says what it means on your task.
 *
 * @example
 * const escalate = confidenceTrigger({ threshold: 0.8 }); // reads `"confidence": 0.93` from the text
 */
export function confidenceTrigger(options: ConfidenceTriggerOptions): EscalationTrigger {
  const { threshold, read = selfReportedConfidence } = options;
  const value = thresholdValue(threshold);
  if (!(value >= 0 && value <= 1))
    throw new ConfigurationError('threshold', `must be in [0, 1], got ${String(value)}`);
  const label = typeof threshold === 'number' ? 'uncalibrated threshold' : 'calibrated threshold';
  return {
    name: 'confidence',
    kinds: ['confidence'],
    check({ response }): TriggerVerdict {
      const score = read(response);
      if (score === undefined || !Number.isFinite(score))
        return { kind: 'escalate', trigger: 'confidence', reason: 'no confidence reported' };
      if (score < value)
        return {
          kind: 'escalate',
          trigger: 'confidence',
          reason: `confidence ${round(score)} below the ${label} ${round(value)}`,
          score,
        };
      return { kind: 'keep', score };
    },
  };
}

const confidencePattern = /"?confidence"?\s*[:=]\s*(-?\d+(?:\.\d+)?)/i;

/**
 * A self-reported confidence from the answer's text: a `confidence` field of its JSON, or
 * `confidence: 0.8` anywhere in it. Values above 1 are read as percentages.
 */
export function selfReportedConfidence(response: ModelResponse): number | undefined {
  const match = confidencePattern.exec(textOf(response.content));
  if (!match?.[1]) return undefined;
  const reported = Number(match[1]);
  const score = reported > 1 ? reported / 100 : reported;
  return score >= 0 && score <= 1 ? score : undefined;
}

const round = (value: number) => Math.round(value * 1000) / 1000;
