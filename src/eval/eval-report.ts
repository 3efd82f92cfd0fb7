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

/** Counts one more of `key`; keys keep the order they were first seen in. */
function count<K extends string>(counts: Partial<Record<K, number>>, key: K): void {
  counts[key] = (counts[key] ?? 0) + 1;
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
  // One pass over each case's records and one over all of them, in plain loops: this runs once per
  // eval, so mostly before the JIT has looked at it, where each filter/map/flatMap is a walk of
  // the records through a callback, and an array made and thrown away.
  const byCase = new Map<string, TrialRecord[]>();
  for (const id of input.caseIds) byCase.set(id, []);
  for (const record of input.records) byCase.get(record.caseId)?.push(record);
  const cases: CaseReport[] = [];
  const atK: number[] = [];
  const hatK: number[] = [];
  const tallies: { n: number; passes: number }[] = [];
  for (const [id, records] of byCase) {
    const n = records.length;
    let passes = 0;
    const failureClasses: Partial<Record<FailureClass, number>> = {};
    for (let i = 0; i < n; i++) {
      const record = records[i] as TrialRecord;
      if (record.pass) passes++;
      if (record.failureClass) count(failureClasses, record.failureClass);
    }
    const one: CaseReport = {
      id,
      n,
      passes,
      passRate: n === 0 ? 0 : passes / n,
      passAtK: n === 0 ? null : passAtK(n, passes, k),
      passHatK: n === 0 ? null : passHatK(n, passes, k),
      failureClasses,
    };
    cases.push(one);
    if (one.passAtK !== null) atK.push(one.passAtK);
    if (one.passHatK !== null) hatK.push(one.passHatK);
    tallies.push({ n, passes });
  }
  const records = input.records;
  const total = records.length;
  let passes = 0;
  let toolCalls = 0;
  let invalid = 0;
  let repeated = 0;
  let wasted = 0;
  let gradingCostUsd = 0;
  const costs: number[] = [];
  const latencies: number[] = [];
  const steps: number[] = [];
  const billedTokens: number[] = [];
  const terminal: Partial<Record<Outcome['kind'], number>> = {};
  const failureClasses: Partial<Record<FailureClass, number>> = {};
  for (let i = 0; i < total; i++) {
    const record = records[i] as TrialRecord;
    if (record.pass) passes++;
    const trajectory = record.trajectory;
    toolCalls += trajectory.toolCalls;
    invalid += trajectory.invalidToolCalls;
    repeated += trajectory.repeatedCalls;
    wasted += trajectory.wastedSteps;
    gradingCostUsd += record.gradingCostUsd ?? 0;
    costs.push(record.costUsd);
    latencies.push(record.latencyMs);
    steps.push(trajectory.steps);
    billedTokens.push(record.billedTokens);
    count(terminal, record.outcome.kind);
    if (record.failureClass) count(failureClasses, record.failureClass);
  }
  const intervals = caseBootstrap(tallies, k, seededRandom(input.config.seed));
  const cost = distribution(costs);
  const report: EvalReport = {
    v: 1,
    suite: input.suite,
    config: input.config,
    stopped: input.stopped,
    cases,
    summary: {
      k,
      trials: total,
      passRate: total === 0 ? 0 : passes / total,
      passRateCi95: wilsonInterval(passes, total),
      passRateByCaseCi95: intervals.passRate,
      passAtK: meanOverCases(atK),
      passAtKCi95: intervals.passAtK,
      passHatK: meanOverCases(hatK),
      passHatKCi95: intervals.passHatK,
      costP50: cost.p50,
      costP99: cost.p99,
      cost,
      latencyMs: distribution(latencies),
      steps: distribution(steps),
      billedTokens: distribution(billedTokens),
      gradingCostUsd,
    },
    trajectory: {
      toolCallValidity: toolCalls === 0 ? 1 : (toolCalls - invalid) / toolCalls,
      meanWastedSteps: total === 0 ? 0 : wasted / total,
      repeatedCalls: repeated,
      terminal,
    },
    failureClasses,
    trials: [...records],
  };
  if (input.judge) report.judge = input.judge;
  return report;
}
