import type { JudgeCalibration } from './calibrate-judge.js';
import type { JudgeSummary } from './eval-types.js';
import type { Judge } from './judge.js';

export interface JudgeSummaryOptions {
  /** The least κ against people at which the judge's verdicts are reported without a warning. @default 0.6 */
  minKappa?: number;
  /** The fewest calibration samples whose κ is reported without a warning. @default 30 */
  minSamples?: number;
}

function figure(value: number): string {
  return value.toFixed(2);
}

/**
 * What a report says about its judge: identity, calibration figures, and a one-line warning when its
 * verdicts cannot be trusted: no calibration on record, a calibration of another model or rubric
 * version (a changed ruler), κ undefined, or κ below `minKappa`.
 *
 * @example
 * import { scriptedModel } from 'reins/testing';
 * import { defineJudge } from 'reins/eval';
 * const judge = defineJudge({ id: 'helpful', model: scriptedModel([]), modelId: 'm-1', rubric: { version: 'v2', text: '...' } });
 * judgeSummary(judge, undefined).warning; // 'judge helpful has no calibration on record: its verdicts are unmeasured'
 */
export function judgeSummary(
  judge: Judge<string>,
  calibration: JudgeCalibration<string> | undefined,
  options: JudgeSummaryOptions = {},
): JudgeSummary {
  const { minKappa = 0.6, minSamples = 30 } = options;
  const identity = { judgeId: judge.id, model: judge.modelId, rubricVersion: judge.rubric.version };
  const unmeasured = (warning: string): JudgeSummary => ({
    ...identity,
    kappa: null,
    agreement: null,
    positionFlipRate: null,
    warning,
  });
  if (calibration === undefined)
    return unmeasured(`judge ${judge.id} has no calibration on record: its verdicts are unmeasured`);
  if (
    calibration.judgeId !== judge.id ||
    calibration.model !== judge.modelId ||
    calibration.rubricVersion !== judge.rubric.version
  )
    return unmeasured(
      `judge ${judge.id} was calibrated as ${calibration.judgeId} on ${calibration.model} rubric ${calibration.rubricVersion}, but runs on ${judge.modelId} rubric ${judge.rubric.version}: its verdicts are unmeasured`,
    );
  const { kappa, agreement, positionFlipRate } = calibration;
  let warning: string | null = null;
  if (kappa === null)
    warning = `judge ${judge.id} has κ undefined on its ${calibration.n} calibration samples (too few, or one label throughout): its verdicts are unmeasured`;
  else if (calibration.n < minSamples)
    warning = `judge ${judge.id} was calibrated on ${calibration.n} samples, fewer than ${minSamples}: its κ ${figure(kappa)} is not a measurement yet`;
  else if (kappa < minKappa)
    warning = `judge ${judge.id} agrees with people at κ ${figure(kappa)}, below the required ${figure(minKappa)}${agreement === null ? '' : ` (raw agreement ${figure(agreement)})`}`;
  return { ...identity, kappa, agreement, positionFlipRate, warning };
}
