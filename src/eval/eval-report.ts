import type { Outcome } from '../loop/outcome.js';
import { seededRandom } from '../testing/seeded-random.js';
import { caseBootstrap } from './case-bootstrap.js';
import { distribution } from './distribution.js';
import type { CaseReport, EvalReport, FailureClass, JudgeSummary, TrialRecord } from './eval-types.js';
import { meanOverCases, passAtK, passHatK } from './pass-at-k.js';
import { wilsonInterval } from './wilson-interval.js';

/** What a report is built from. */
export interface EvalReportInput {
  suite: string;
  caseIds: readonly string[];
  config: EvalReport['config'];
  records: readonly TrialRecord[];
  stopped: EvalReport['stopped'];
  judge?: JudgeSummary;
}

function tally<K extends string>(keys: Iterable<K>): Partial<Record<K, number>> {
  const counts: Partial<Record<K, number>> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/**
 * The report of an eval: per case its trials, passes and unbiased pass@k and pass^k; over cases the
 * pass rate with a Wilson interval over trials and a two-level bootstrap interval by cases, the mean
 * pass@k and pass^k with two-level bootstrap intervals (cases, then each case's trials; seeded by the
 * eval's seed, so the same records give the same report), cost, latency, steps and
 * billed tokens as distributions, the trajectory figures and the failure mix.
 */
export function buildEvalReport(input: EvalReportInput): EvalReport {
  const { k } = input.config;
  const byCase = new Map<string, TrialRecord[]>();
  for (const id of input.caseIds) byCase.set(id, []);
  for (const record of input.records) byCase.get(record.caseId)?.push(record);
  const cases: CaseReport[] = [];
  for (const [id, records] of byCase) {
    const n = records.length;
    const passes = records.filter((record) => record.pass).length;
    cases.push({
      id,
      n,
      passes,
      passRate: n === 0 ? 0 : passes / n,
      passAtK: n === 0 ? null : passAtK(n, passes, k),
      passHatK: n === 0 ? null : passHatK(n, passes, k),
      failureClasses: tally(records.flatMap((record) => (record.failureClass ? [record.failureClass] : []))),
    });
  }
  const records = input.records;
  const passes = records.filter((record) => record.pass).length;
  const atK = cases.flatMap((one) => (one.passAtK === null ? [] : [one.passAtK]));
  const hatK = cases.flatMap((one) => (one.passHatK === null ? [] : [one.passHatK]));
  const intervals = caseBootstrap(
    cases.map((one) => ({ n: one.n, passes: one.passes })),
    k,
    seededRandom(input.config.seed),
  );
  const cost = distribution(records.map((record) => record.costUsd));
  const terminal: Partial<Record<Outcome['kind'], number>> = tally(
    records.map((record) => record.outcome.kind),
  );
  let toolCalls = 0;
  let invalid = 0;
  let repeated = 0;
  let wasted = 0;
  for (const record of records) {
    toolCalls += record.trajectory.toolCalls;
    invalid += record.trajectory.invalidToolCalls;
    repeated += record.trajectory.repeatedCalls;
    wasted += record.trajectory.wastedSteps;
  }
  const report: EvalReport = {
    v: 1,
    suite: input.suite,
    config: input.config,
    stopped: input.stopped,
    cases,
    summary: {
      k,
      trials: records.length,
      passRate: records.length === 0 ? 0 : passes / records.length,
      passRateCi95: wilsonInterval(passes, records.length),
      passRateByCaseCi95: intervals.passRate,
      passAtK: meanOverCases(atK),
      passAtKCi95: intervals.passAtK,
      passHatK: meanOverCases(hatK),
      passHatKCi95: intervals.passHatK,
      costP50: cost.p50,
      costP99: cost.p99,
      cost,
      latencyMs: distribution(records.map((record) => record.latencyMs)),
      steps: distribution(records.map((record) => record.trajectory.steps)),
      billedTokens: distribution(records.map((record) => record.billedTokens)),
      gradingCostUsd: records.reduce((sum, record) => sum + (record.gradingCostUsd ?? 0), 0),
    },
    trajectory: {
      toolCallValidity: toolCalls === 0 ? 1 : (toolCalls - invalid) / toolCalls,
      meanWastedSteps: records.length === 0 ? 0 : wasted / records.length,
      repeatedCalls: repeated,
      terminal,
    },
    failureClasses: tally(
      records.flatMap((record): FailureClass[] => (record.failureClass ? [record.failureClass] : [])),
    ),
    trials: [...records],
  };
  if (input.judge) report.judge = input.judge;
  return report;
}
