import { ConfigurationError } from '../errors/reins-error.js';
import { seededRandom } from '../testing/seeded-random.js';
import { bootstrapInterval } from './bootstrap-interval.js';
import type { EvalReport, Interval, TrialRecord } from './eval-types.js';
import { comparePaired, type PairedComparison, type PairedDelta, pairedDelta } from './paired-test.js';
import { quantileOfSorted } from './quantile.js';

/** One case, baseline against candidate. */
export interface CaseComparison {
  id: string;
  /** Trials run by both (paired by trial number, so by seed). */
  n: number;
  baselinePassRate: number;
  candidatePassRate: number;
  difference: number;
}

/** Two configurations on the same cases and seeds. */
export interface EvalComparison {
  baseline: string;
  candidate: string;
  /** Trials present in both reports, paired by case and trial number. */
  pairs: number;
  /** Trials in one report only (left out of every figure). */
  unpaired: number;
  /** The pass-rate change over the paired trials: exact McNemar, Newcombe interval. */
  passRate: PairedComparison;
  /**
   * The mean per-case change in pass rate with a bootstrap interval over cases. Trials of one case
   * are correlated, so a change confined to one case can look certain trial by trial; null with
   * fewer than 2 cases.
   */
  byCase: { meanDifference: number; differenceCi95: Interval | null } | null;
  /** Neither test can tell the change from noise: McNemar's p ≥ alpha, or the by-case interval holds 0. */
  withinNoise: boolean;
  /** Mean paired cost difference (candidate − baseline, USD per trial) with a bootstrap interval. */
  costUsd: PairedDelta;
  costP99: { baseline: number; candidate: number; delta: number };
  latencyP99Ms: { baseline: number; candidate: number; delta: number };
  cases: CaseComparison[];
  /** One sentence: what changed, or that the change is within noise. */
  verdict: string;
}

/** The p99 the report prints (type-7 quantile), so the two never disagree on the same data. */
function p99(values: number[]): number {
  if (values.length === 0) return 0;
  return quantileOfSorted(
    [...values].sort((a, b) => a - b),
    0.99,
  );
}

const points = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)} points`;
const interval = (value: Interval) => `[${(value[0] * 100).toFixed(1)}, ${(value[1] * 100).toFixed(1)}]`;

/**
 * Compares a baseline and a candidate run on the same cases with the same eval seed: trials are
 * paired by case and trial number (so by seed), and the pass-rate change is tested on the pairs
 * that disagree (exact McNemar) and, over cases, as a bootstrap interval of the mean per-case change
 * (a change confined to one case is not a change of the agent); cost as a paired difference and the
 * p99s beside. When either cannot tell the change from noise, the verdict says so.
 *
 * @example
 * const comparison = compareEvals(baselineReport, candidateReport);
 * console.log(comparison.verdict); // "this change is within noise (p = 0.62, …)"
 */
export function compareEvals(
  baseline: EvalReport,
  candidate: EvalReport,
  options: { alpha?: number; seed?: number } = {},
): EvalComparison {
  if (baseline?.v !== 1 || candidate?.v !== 1)
    throw new ConfigurationError('report', 'both reports must be eval reports (v 1)');
  if (baseline.config.seed !== candidate.config.seed)
    throw new ConfigurationError(
      'candidate',
      `was run with seed ${candidate.config.seed}, the baseline with ${baseline.config.seed}: trials pair only on the same seed`,
    );
  const runIds = new Set(baseline.trials.map((trial) => trial.runId).filter((id) => id !== ''));
  if (candidate.trials.some((trial) => trial.runId !== '' && runIds.has(trial.runId)))
    throw new ConfigurationError(
      'candidate',
      'holds trials of the baseline itself (the same run ids): was it resumed from the same results file under the same configuration?',
    );
  const key = (trial: TrialRecord) => `${trial.caseId}\u0000${trial.trial}`;
  const byKey = new Map(candidate.trials.map((trial) => [key(trial), trial]));
  const pairs: [TrialRecord, TrialRecord][] = [];
  for (const trial of baseline.trials) {
    const other = byKey.get(key(trial));
    if (other) pairs.push([trial, other]);
  }
  const unpaired = baseline.trials.length + candidate.trials.length - 2 * pairs.length;
  const passRate = comparePaired(
    pairs.map(([a]) => a.pass),
    pairs.map(([, b]) => b.pass),
    options.alpha === undefined ? {} : { alpha: options.alpha },
  );
  const costUsd = pairedDelta(
    pairs.map(([a]) => a.costUsd),
    pairs.map(([, b]) => b.costUsd),
    { random: seededRandom(options.seed ?? baseline.config.seed) },
  );
  const pairsByCase = new Map<string, [TrialRecord, TrialRecord][]>();
  for (const pair of pairs) {
    const list = pairsByCase.get(pair[0].caseId) ?? [];
    list.push(pair);
    pairsByCase.set(pair[0].caseId, list);
  }
  const cases = [...pairsByCase].map(([id, list]): CaseComparison => {
    const baselinePassRate = list.filter(([a]) => a.pass).length / list.length;
    const candidatePassRate = list.filter(([, b]) => b.pass).length / list.length;
    return {
      id,
      n: list.length,
      baselinePassRate,
      candidatePassRate,
      difference: candidatePassRate - baselinePassRate,
    };
  });
  const costs = (side: 0 | 1) => pairs.map((pair) => pair[side].costUsd);
  const latencies = (side: 0 | 1) => pairs.map((pair) => pair[side].latencyMs);
  const costP99 = { baseline: p99(costs(0)), candidate: p99(costs(1)), delta: p99(costs(1)) - p99(costs(0)) };
  const latencyP99Ms = {
    baseline: p99(latencies(0)),
    candidate: p99(latencies(1)),
    delta: p99(latencies(1)) - p99(latencies(0)),
  };
  const byCase =
    cases.length < 2
      ? null
      : {
          meanDifference: cases.reduce((sum, one) => sum + one.difference, 0) / cases.length,
          differenceCi95: bootstrapInterval(
            cases.map((one) => one.difference),
            { random: seededRandom((options.seed ?? baseline.config.seed) + 1) },
          ),
        };
  const caseCi = byCase?.differenceCi95;
  const casesHoldZero = caseCi ? caseCi[0] <= 0 && caseCi[1] >= 0 : false;
  const withinNoise = passRate.withinNoise || casesHoldZero;
  const p = passRate.pValue < 0.001 ? '< 0.001' : passRate.pValue.toFixed(3);
  const caseNote = caseCi
    ? `; by case ${points(byCase?.meanDifference ?? 0)} ${interval(caseCi)} over ${cases.length} cases`
    : '';
  const verdict =
    pairs.length === 0
      ? 'no trial is in both reports: nothing to compare'
      : withinNoise
        ? `this change is within noise: pass rate ${points(passRate.difference)} ${interval(passRate.differenceCi95)}, p = ${p} on ${passRate.discordant.baselineOnly + passRate.discordant.candidateOnly} discordant of ${pairs.length} paired trials${caseNote}`
        : `the candidate ${passRate.difference > 0 ? 'passes more' : 'passes less'}: ${points(passRate.difference)} ${interval(passRate.differenceCi95)}, p = ${p} (${passRate.discordant.candidateOnly} trials fixed, ${passRate.discordant.baselineOnly} broken)${caseNote}`;
  return {
    baseline: baseline.suite,
    candidate: candidate.suite,
    pairs: pairs.length,
    unpaired,
    passRate,
    byCase,
    withinNoise,
    costUsd,
    costP99,
    latencyP99Ms,
    cases,
    verdict,
  };
}
