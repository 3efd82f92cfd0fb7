import { cyrb53 } from '../controls/text-hash.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { bootstrapInterval } from '../eval/bootstrap-interval.js';
import type { Interval } from '../eval/eval-types.js';
import { comparePaired } from '../eval/paired-test.js';
import { quantileOfSorted } from '../eval/quantile.js';
import { wilsonInterval } from '../eval/wilson-interval.js';
import type { ModelRequest, ModelResponse } from '../model/model.js';
import type { Clock, RandomSource } from '../time/clock.js';
import { systemClock } from '../time/clock.js';
import type { EscalationTrigger } from './escalation-trigger.js';
import type { TriggerThreshold } from './trigger-threshold.js';

/** One labeled request, with what the cheap tier answered and what each tier cost on it. */
export interface LabeledSample {
  id: string;
  request: ModelRequest;
  /** The cheap tier's answer. */
  response: ModelResponse;
  /** The label: the cheap answer is wrong (a hard request), so the cascade should escalate it. */
  needsEscalation: boolean;
  /** Whether the strong tier answers it right: needed for `targetAccuracyLoss` (the strong tier errs too). */
  strongCorrect?: boolean;
  /** What the cheap and the strong call cost on this request (USD, or any one unit). */
  cheapCost: number;
  strongCost: number;
  cheapLatencyMs: number;
  strongLatencyMs: number;
}

export interface CalibrateTriggerOptions {
  /**
   * The most misroutes (hard requests kept on the cheap tier, as a share of all requests) the
   * threshold may let through: the wrong answers a cascade ships silently. Give this, or
   * `targetAccuracyLoss`, or both (then both must be met).
   */
  targetMisrouteRate?: number;
  /**
   * The most accuracy the cascade may lose against sending everything to the strong tier (0.01 is
   * one point). Unlike the misroute rate it counts the strong tier's own errors (a kept cheap answer
   * the strong tier would have got wrong is a gain), so every sample needs `strongCorrect`.
   */
  targetAccuracyLoss?: number;
  /**
   * `upper`: the 95 % upper bound must meet each target (Wilson for the misroute rate, Newcombe's
   * paired interval for accuracy loss), so the set was big enough to show it;
   * `point`: the observed figure must.
   * @default 'upper'
   */
  bound?: 'upper' | 'point';
  /** Where the bootstrap intervals' resamples come from. Required: a report must rebuild the same. */
  random: RandomSource;
  /** @default 1000 */
  resamples?: number;
  /** Stamps the threshold's fitting date. @default systemClock */
  clock?: Clock;
}

/** Rows are the label, columns what the trigger did. */
export interface ConfusionMatrix {
  /** Needed escalating and escalated. */
  escalatedHard: number;
  /** Easy, escalated anyway: paid for both calls. */
  escalatedEasy: number;
  /** Needed escalating, kept cheap: a misroute, a wrong answer shipped. */
  keptHard: number;
  keptEasy: number;
}

/** The figures of one threshold on the labeled set. */
export interface OperatingPoint {
  /** The threshold these figures are at. */
  atThreshold: number;
  confusion: ConfusionMatrix;
  misrouteRate: { estimate: number; interval: Interval };
  escalationRate: { estimate: number; interval: Interval };
  /** 1 − cascade cost ÷ all-strong cost, with a bootstrap interval over samples. */
  savings: { estimate: number; interval: Interval | null };
  /** What escalated requests wait beyond a strong call alone (the cheap call before it). */
  latencyPenaltyMs: { mean: number; interval: Interval | null; p99: number };
  /** Latency p99 of the cascade and of all-strong over the set. */
  p99Ms: { cascade: number; allStrong: number };
  /** Accuracy lost against all-strong (negative: gained), when samples carry `strongCorrect`. */
  accuracyLoss?: { estimate: number; interval: Interval };
}

/** A calibration's outcome: a threshold meeting the target, or the best the trigger can do. */
export type TriggerCalibration =
  | ({ kind: 'met'; threshold: TriggerThreshold } & OperatingPoint)
  | ({
      kind: 'unmet';
      /** Why no threshold meets the target. */
      reason: string;
    } & OperatingPoint);

/** A sample as a trigger saw it: escalated whatever the threshold, or a score to compare. */
export interface ScoredSample {
  forced: boolean;
  score?: number;
}

/**
 * Fits a scored trigger's threshold (a {@link confidenceTrigger} or {@link judgeTrigger}, alone or
 * after structural checks in {@link anyTrigger}) on labeled samples: the lowest threshold, so the
 * most savings, whose misroute rate meets the target. Reports the confusion matrix, savings against
 * all-strong and the latency penalty at that threshold, with intervals (Wilson for rates, bootstrap
 * for savings and latency). The threshold it returns carries the set it was fitted on and when;
 * build the production trigger with it.
 *
 * The trigger's own threshold does not matter: every sample's score is read and thresholds swept.
 * Only one scored trigger may be in the composition (calibrate a confidence and a judge apart).
 *
 * @example
 * const calibration = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), samples, {
 *   targetMisrouteRate: 0.01,
 *   random: seededRandom(1),
 * });
 * if (calibration.kind === 'met') confidenceTrigger({ threshold: calibration.threshold });
 */
export async function calibrateTrigger(
  trigger: EscalationTrigger,
  samples: readonly LabeledSample[],
  options: CalibrateTriggerOptions,
): Promise<TriggerCalibration> {
  const { targetMisrouteRate, targetAccuracyLoss, bound = 'upper', random, resamples = 1000 } = options;
  if (targetMisrouteRate === undefined && targetAccuracyLoss === undefined)
    throw new ConfigurationError('targetMisrouteRate', 'give targetMisrouteRate, targetAccuracyLoss or both');
  if (targetMisrouteRate !== undefined && !(targetMisrouteRate >= 0 && targetMisrouteRate < 1))
    throw new ConfigurationError(
      'targetMisrouteRate',
      `must be in [0, 1), got ${String(targetMisrouteRate)}`,
    );
  if (targetAccuracyLoss !== undefined && !(targetAccuracyLoss >= 0 && targetAccuracyLoss < 1))
    throw new ConfigurationError(
      'targetAccuracyLoss',
      `must be in [0, 1), got ${String(targetAccuracyLoss)}`,
    );
  if (samples.length === 0) throw new ConfigurationError('samples', 'needs at least one labeled sample');
  if (targetAccuracyLoss !== undefined && samples.some((sample) => typeof sample.strongCorrect !== 'boolean'))
    throw new ConfigurationError('samples', 'targetAccuracyLoss needs strongCorrect on every sample');
  const scoredKinds = trigger.kinds.filter((kind) => kind !== 'structural');
  if (scoredKinds.length > 1)
    throw new ConfigurationError(
      'trigger',
      `combines ${scoredKinds.join(' and ')}: calibrate one scored trigger at a time`,
    );
  const scored: ScoredSample[] = [];
  for (const sample of samples) {
    const verdict = await trigger.check({ request: sample.request, response: sample.response, tier: 0 });
    scored.push(
      verdict.score !== undefined
        ? { forced: false, score: verdict.score }
        : { forced: verdict.kind === 'escalate' },
    );
  }
  const evaluate = (threshold: number) => operatingPoint(samples, scored, threshold, random, resamples);
  const meets = (threshold: number) => {
    if (targetMisrouteRate !== undefined) {
      const misroutes = misroutesAt(samples, scored, threshold);
      const rate =
        bound === 'upper' ? wilsonInterval(misroutes, samples.length)[1] : misroutes / samples.length;
      if (rate > targetMisrouteRate) return false;
    }
    if (targetAccuracyLoss !== undefined) {
      const loss = accuracyLossAt(samples, scored, threshold);
      if ((bound === 'upper' ? loss.upper : loss.estimate) > targetAccuracyLoss) return false;
    }
    return true;
  };
  const candidates = candidateThresholds(scored);
  const chosen = candidates.find(meets);
  if (chosen === undefined) {
    const strictest = candidates.at(-1) ?? 1;
    return {
      kind: 'unmet',
      reason: `no threshold meets the target (${bound} bound): escalating every scored sample still misses it`,
      ...evaluate(strictest),
    };
  }
  const point = evaluate(chosen);
  const ids = samples.map((sample) => sample.id);
  const threshold: TriggerThreshold = {
    value: chosen,
    fittedOn: {
      size: samples.length,
      fingerprint: cyrb53(
        samples.map((sample) => `${sample.id}:${sample.needsEscalation ? 1 : 0}`).join('\n'),
      ),
      ...(ids.length <= 1000 ? { ids } : {}),
    },
    fittedAtMs: (options.clock ?? systemClock).now(),
    escalationRate: point.escalationRate,
    ...(targetMisrouteRate !== undefined ? { targetMisrouteRate } : {}),
    ...(targetAccuracyLoss !== undefined ? { targetAccuracyLoss } : {}),
  };
  return { ...point, kind: 'met', threshold };
}

/** 0 (escalate on no score), the midpoints between distinct scores, then 1: ascending. */
function candidateThresholds(scored: readonly ScoredSample[]): number[] {
  const distinct = [...new Set(scored.flatMap((s) => (s.score === undefined ? [] : [s.score])))].sort(
    (a, b) => a - b,
  );
  const candidates = [0];
  for (let i = 1; i < distinct.length; i++)
    candidates.push(((distinct[i - 1] as number) + (distinct[i] as number)) / 2);
  if ((distinct.at(-1) ?? 0) < 1) candidates.push(1);
  return candidates;
}

const escalates = (scored: ScoredSample, threshold: number) =>
  scored.forced || (scored.score !== undefined && scored.score < threshold);

function misroutesAt(
  samples: readonly LabeledSample[],
  scored: readonly ScoredSample[],
  threshold: number,
): number {
  let misroutes = 0;
  for (let i = 0; i < samples.length; i++)
    if ((samples[i] as LabeledSample).needsEscalation && !escalates(scored[i] as ScoredSample, threshold))
      misroutes++;
  return misroutes;
}

/**
 * Accuracy lost against all-strong at `threshold`: the mean over samples of (strong right − cascade
 * right), nonzero only on kept samples, with a 95 % upper bound from Newcombe's interval for paired
 * proportions (Wilson-based, as the eval harness compares two versions): it never has zero width,
 * so three samples that agree are not taken for evidence (a normal bound would be exactly 0).
 */
function accuracyLossAt(
  samples: readonly LabeledSample[],
  scored: readonly ScoredSample[],
  threshold: number,
): { estimate: number; lower: number; upper: number } {
  const n = samples.length;
  const strong: boolean[] = new Array(n);
  const cascade: boolean[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const sample = samples[i] as LabeledSample;
    const strongRight = sample.strongCorrect === true;
    strong[i] = strongRight;
    cascade[i] = escalates(scored[i] as ScoredSample, threshold) ? strongRight : !sample.needsEscalation;
  }
  const compared = comparePaired(strong, cascade);
  return {
    estimate: 0 - compared.difference || 0,
    lower: -compared.differenceCi95[1],
    upper: -compared.differenceCi95[0],
  };
}

/** The figures of `threshold` over the labeled set. */
export function operatingPoint(
  samples: readonly LabeledSample[],
  scored: readonly ScoredSample[],
  threshold: number,
  random: RandomSource,
  resamples: number,
): OperatingPoint {
  const n = samples.length;
  const confusion: ConfusionMatrix = { escalatedHard: 0, escalatedEasy: 0, keptHard: 0, keptEasy: 0 };
  const escalatedFlags: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const sample = samples[i] as LabeledSample;
    const up = escalates(scored[i] as ScoredSample, threshold);
    escalatedFlags.push(up);
    if (up) confusion[sample.needsEscalation ? 'escalatedHard' : 'escalatedEasy']++;
    else confusion[sample.needsEscalation ? 'keptHard' : 'keptEasy']++;
  }
  const escalated = confusion.escalatedHard + confusion.escalatedEasy;
  const indices = samples.map((_, i) => i);
  const savingsOf = (picked: readonly number[]) => {
    let cascade = 0;
    let strong = 0;
    for (const i of picked) {
      const sample = samples[i] as LabeledSample;
      cascade += sample.cheapCost + (escalatedFlags[i] ? sample.strongCost : 0);
      strong += sample.strongCost;
    }
    return strong > 0 ? 1 - cascade / strong : 0;
  };
  const penalties = samples.flatMap((sample, i) => (escalatedFlags[i] ? [sample.cheapLatencyMs] : []));
  const cascadeLatency = samples
    .map((sample, i) => sample.cheapLatencyMs + (escalatedFlags[i] ? sample.strongLatencyMs : 0))
    .sort((a, b) => a - b);
  const strongLatency = samples.map((sample) => sample.strongLatencyMs).sort((a, b) => a - b);
  const labeledStrong = samples.every((sample) => typeof sample.strongCorrect === 'boolean');
  const loss = labeledStrong ? accuracyLossAt(samples, scored, threshold) : undefined;
  return {
    atThreshold: threshold,
    confusion,
    misrouteRate: { estimate: confusion.keptHard / n, interval: wilsonInterval(confusion.keptHard, n) },
    escalationRate: { estimate: escalated / n, interval: wilsonInterval(escalated, n) },
    savings: {
      estimate: savingsOf(indices),
      interval: bootstrapInterval(indices, { statistic: savingsOf, random, resamples }),
    },
    latencyPenaltyMs: {
      mean: penalties.length > 0 ? penalties.reduce((a, b) => a + b, 0) / penalties.length : 0,
      interval: bootstrapInterval(penalties, { random, resamples }),
      p99:
        quantileOfSorted(
          [...penalties].sort((a, b) => a - b),
          0.99,
        ) || 0,
    },
    p99Ms: {
      cascade: quantileOfSorted(cascadeLatency, 0.99),
      allStrong: quantileOfSorted(strongLatency, 0.99),
    },
    ...(loss
      ? {
          accuracyLoss: {
            estimate: loss.estimate,
            interval: [loss.lower, loss.upper] as Interval,
          },
        }
      : {}),
  };
}
