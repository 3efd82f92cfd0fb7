import { ConfigurationError } from '../errors/reins-error.js';
import type { Usage } from '../model/model.js';
import { addUsage, emptyUsage } from '../model/model.js';
import { type Clock, systemClock } from '../time/clock.js';
import { type ConfusionMatrix, cohensKappa, confusionMatrix, weightedKappa } from './agreement.js';
import { type Comparison, type Grade, invalidLabel, type Judge } from './judge.js';

/** An answer a person graded, to check the judge against. */
export interface PointwiseSample<Label extends string = string> {
  id: string;
  question: string;
  answer: string;
  reference?: string;
  humanLabel: Label;
}

/** Two answers a person compared; `tie` when neither is better. */
export interface PairwiseSample {
  id: string;
  question: string;
  a: string;
  b: string;
  humanWinner: 'a' | 'b' | 'tie';
}

export type CalibrationSample<Label extends string = string> = PointwiseSample<Label> | PairwiseSample;

/**
 * Filler that adds words and no facts, appended to an answer to test for verbosity bias. A judge
 * that reads the answer gives the padded one the same label.
 */
export const neutralPadding =
  'To put it another way, the points above are the whole of the answer. They are stated plainly so that each one can be read and checked on its own, and nothing further needs to be added to them here.';

export interface CalibrateJudgeOptions {
  /** Stamps the calibration. @default systemClock */
  clock?: Pick<Clock, 'now'>;
  /** How to lengthen an answer without changing its facts: text to append, or a function. @default neutralPadding, after a blank line */
  padding?: string | ((answer: string) => string);
  /** Weights of the weighted κ on scales of more than two labels. @default 'quadratic' */
  weights?: 'linear' | 'quadratic';
}

/** A pointwise sample the judge and the person labeled differently. */
export interface CalibrationDisagreement<Label extends string> {
  id: string;
  humanLabel: Label;
  judgeLabel: Label | typeof invalidLabel;
  /** For an invalid verdict, why. */
  detail?: string;
}

/** How far a judge's verdicts can be trusted, measured against people. Serializable. */
export interface JudgeCalibration<Label extends string = string> {
  judgeId: string;
  model: string;
  rubricVersion: string;
  /** When it was measured (`clock.now()`, ms since the epoch). */
  at: number;
  /** Pointwise samples. */
  n: number;
  /** Share of pointwise samples labeled as the person did (an invalid verdict never agrees). null when n = 0. */
  agreement: number | null;
  /** Cohen's κ of judge against person, an invalid verdict counted as a label of its own. null when undefined. */
  kappa: number | null;
  /** Weighted κ on ordinal scales of more than two labels, over samples with a valid verdict; else null. */
  weightedKappa: number | null;
  /** Rows: the person's labels; columns: the judge's, with `(invalid)` last. */
  confusion: ConfusionMatrix<Label | typeof invalidLabel>;
  /** Share of judge calls on the samples (pointwise grades and pairwise comparisons) with no usable verdict. */
  invalidRate: number | null;
  /** Pairwise samples. */
  pairwiseN: number;
  /** Share of pairwise samples where the judge's both-orders result matches the person (inconsistent matches a tie). */
  pairwiseAgreement: number | null;
  /** Share of pairwise samples, among those with two valid calls, whose pick changed when the order was swapped. */
  positionFlipRate: number | null;
  /** Share of pointwise samples, among those graded validly with and without padding, whose label the padding changed. */
  verbositySensitivity: number | null;
  /** Pointwise samples where judge and person differ, for a person to read. */
  disagreements: CalibrationDisagreement<Label>[];
  /** Every judge call made for this calibration. */
  usage: Usage;
}

function isPairwise(sample: CalibrationSample<string>): sample is PairwiseSample {
  return 'humanWinner' in sample;
}

function share(count: number, total: number): number | null {
  return total === 0 ? null : count / total;
}

function labelOf<Label extends string>(grade: Grade<Label>): Label | typeof invalidLabel {
  return grade.kind === 'verdict' ? grade.label : invalidLabel;
}

/** A pointwise sample's grades: as written, and padded (only when the first grade was valid). */
interface PointwiseResult<Label extends string> {
  sample: PointwiseSample<Label>;
  grade: Grade<Label>;
  padded: Grade<Label> | undefined;
}

async function gradeSample<Label extends string>(
  judge: Judge<Label>,
  sample: PointwiseSample<Label>,
  pad: (answer: string) => string,
): Promise<PointwiseResult<Label>> {
  const input = { question: sample.question, answer: sample.answer };
  const withReference = sample.reference === undefined ? input : { ...input, reference: sample.reference };
  const grade = await judge.grade(withReference);
  if (grade.kind === 'invalid') return { sample, grade, padded: undefined };
  return { sample, grade, padded: await judge.grade({ ...withReference, answer: pad(sample.answer) }) };
}

function pointwiseFigures<Label extends string>(
  results: readonly PointwiseResult<Label>[],
  scale: readonly Label[],
  weights: 'linear' | 'quadratic',
) {
  const human = results.map(({ sample }) => sample.humanLabel);
  const judged = results.map(({ grade }) => labelOf(grade));
  const agreed = human.filter((label, i) => label === judged[i]).length;
  const valid = results.flatMap(({ sample, grade }) =>
    grade.kind === 'verdict' ? [{ human: sample.humanLabel, judge: grade.label }] : [],
  );
  const disagreements = results.flatMap(({ sample, grade }): CalibrationDisagreement<Label>[] => {
    if (grade.kind === 'invalid')
      return [
        { id: sample.id, humanLabel: sample.humanLabel, judgeLabel: invalidLabel, detail: grade.detail },
      ];
    return grade.label === sample.humanLabel
      ? []
      : [{ id: sample.id, humanLabel: sample.humanLabel, judgeLabel: grade.label }];
  });
  let paddedPairs = 0;
  let paddedChanged = 0;
  for (const { grade, padded } of results) {
    if (grade.kind === 'invalid' || padded === undefined) continue;
    paddedPairs++;
    // A judge that cannot grade the padded answer at all is swayed by the padding too.
    if (padded.kind === 'invalid' || padded.label !== grade.label) paddedChanged++;
  }
  return {
    n: results.length,
    agreement: share(agreed, results.length),
    kappa: cohensKappa<Label | typeof invalidLabel>(human, judged),
    weightedKappa:
      scale.length > 2 && valid.length > 0
        ? weightedKappa(
            valid.map((pair) => pair.human),
            valid.map((pair) => pair.judge),
            { categories: scale, weights },
          )
        : null,
    confusion: confusionMatrix<Label | typeof invalidLabel>(human, judged, [...scale, invalidLabel]),
    verbositySensitivity: share(paddedChanged, paddedPairs),
    disagreements,
  };
}

function pairwiseFigures(results: readonly { sample: PairwiseSample; comparison: Comparison }[]) {
  const valid = results.filter(({ comparison }) => comparison.kind !== 'invalid');
  const flipped = valid.filter(({ comparison }) => comparison.kind === 'inconsistent').length;
  const agreed = valid.filter(
    ({ sample, comparison }) =>
      (comparison.kind === 'preferred' ? comparison.winner : 'tie') === sample.humanWinner,
  ).length;
  return {
    pairwiseN: results.length,
    pairwiseAgreement: share(agreed, results.length),
    positionFlipRate: share(flipped, valid.length),
  };
}

/**
 * Measures a judge against human labels: raw agreement, Cohen's κ (and weighted κ on longer ordinal
 * scales), the confusion matrix, how often it gives no usable verdict, how often a pairwise pick
 * follows the position instead of the answer, and how often padding an answer with filler that adds
 * no facts changes its label. Calls the judge sequentially: 2 calls per pointwise sample (the answer,
 * then the padded answer when the first verdict is valid) and 2 per pairwise sample.
 *
 * Keep a few dozen labeled samples, with both labels well represented (κ needs the minority class),
 * and rerun this whenever the judge's model, rubric or prompt changes.
 *
 * @example
 * import { fakeClock, scriptedModel } from 'reins/testing';
 * import { defineJudge } from 'reins/eval';
 * const judge = defineJudge({ id: 'j', model: scriptedModel([]), modelId: 'm', rubric: { version: 'v1', text: 'Pass correct answers.' } });
 * const calibration = await calibrateJudge(judge, [], { clock: fakeClock() });
 * calibration.kappa; // null: nothing measured
 */
export async function calibrateJudge<Label extends string>(
  judge: Judge<Label>,
  samples: readonly CalibrationSample<Label>[],
  options: CalibrateJudgeOptions = {},
): Promise<JudgeCalibration<Label>> {
  const { clock = systemClock, padding = neutralPadding, weights = 'quadratic' } = options;
  const pad = typeof padding === 'function' ? padding : (answer: string) => `${answer}\n\n${padding}`;
  // Every label is checked before the first call, so a typo costs no tokens.
  for (const [index, sample] of samples.entries())
    if (!isPairwise(sample) && !judge.scale.includes(sample.humanLabel))
      throw new ConfigurationError(
        `samples[${index}].humanLabel`,
        `"${sample.humanLabel}" is not on the judge's scale (${judge.scale.join(', ')})`,
      );

  const pointwise: PointwiseResult<Label>[] = [];
  const pairwise: { sample: PairwiseSample; comparison: Comparison }[] = [];
  let usage = emptyUsage();
  for (const sample of samples) {
    if (isPairwise(sample)) {
      const comparison = await judge.compare({ question: sample.question, a: sample.a, b: sample.b });
      usage = addUsage(usage, comparison.usage);
      pairwise.push({ sample, comparison });
    } else {
      const result = await gradeSample(judge, sample, pad);
      usage = addUsage(usage, result.grade.usage);
      if (result.padded !== undefined) usage = addUsage(usage, result.padded.usage);
      pointwise.push(result);
    }
  }

  const invalid =
    pointwise.filter(({ grade }) => grade.kind === 'invalid').length +
    pairwise.filter(({ comparison }) => comparison.kind === 'invalid').length;
  const { disagreements, ...figures } = pointwiseFigures(pointwise, judge.scale, weights);
  return {
    judgeId: judge.id,
    model: judge.modelId,
    rubricVersion: judge.rubric.version,
    at: clock.now(),
    ...figures,
    invalidRate: share(invalid, samples.length),
    ...pairwiseFigures(pairwise),
    disagreements,
    usage,
  };
}
