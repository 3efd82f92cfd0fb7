import type { TranscriptIndex } from '../transcript-index.js';
import {
  type BillPolicy,
  type BillRunResult,
  billCrossPostWorkload,
  billRun,
  crossPostPrice,
  post18BudgetTokens,
  post18Workload,
} from './bill-run.js';
import { needleBudgetTokens, needleParameters, needlePlan } from './needle-plan.js';
import { type NeedlePolicy, type NeedleRunResult, needlePolicies, needleRun } from './needle-run.js';
import { growthExponent, type SeedAgreement, seedAgreements } from './seed-cost-models.js';

/** The run lengths of the bill benchmark (the issue's, with 1,000 so the fit has three points). */
export const billSteps = [10, 40, 100, 500, 1_000, 2_000] as const;
/** The exponent is fitted on the runs this long or longer. */
export const fitFromSteps = 500;

export interface ContextBenchmarkOptions {
  /** A fresh transcript index per run, for the retrieval policy; without one its rows are left out. */
  index?: () => TranscriptIndex;
  /** @default billSteps */
  steps?: readonly number[];
  /** Seeds of the needle harness. @default 1..10 */
  seeds?: readonly number[];
  /** Told of each finished part, for a progress line. */
  onProgress?: (line: string) => void;
}

/** One bill row: a policy at a run length. `policy` names the cache layout too when it is not the stable prefix. */
export interface BillRow extends Omit<BillRunResult, 'policy'> {
  policy: string;
}

/** A needle policy's means over the seeds. */
export interface RecallRow {
  policy: string;
  /** Share of all planted facts the final window showed, mean over seeds. */
  recall: number;
  byKind: { constraint: number; dead_end: number; id: number };
  /** Ruled-out approaches tried again in the retry run, mean over seeds (of `decisions` per seed). */
  deadEndRetries: number;
  decisions: number;
  /** `recall` calls per seed, both runs. */
  recalls: number;
  seeds: number;
}

export interface ContextBenchmarkFigures {
  runs: BillRow[];
  growthExponent: Record<string, number>;
  /** The bill cross-post's table through the loop and the simulated cache. */
  crossPost: { steps: number; naiveUsd: number; cachedUsd: number; savings: number; printed: string }[];
  /** The seeds' closed forms beside their printed figures. */
  agreements: SeedAgreement[];
  recall: RecallRow[];
  parameters: Record<string, unknown>;
}

const crossPostPrinted: Record<number, string> = {
  10: 'naive $0.2730, cached $0.1788, 34.5 %',
  20: 'naive $0.7860, cached $0.5838, 25.7 %',
  40: 'naive $2.5320, cached $2.1138, 16.5 %',
};

/**
 * The reins part of `reins bench context` (everything but the peers and the overhead, which need
 * other processes): the bill by run length for each policy, with the exponent of its growth; the
 * seeds' printed arithmetic reproduced; the needle harness's recall and dead-end retries per policy.
 */
export async function runContextBenchmark(
  options: ContextBenchmarkOptions = {},
): Promise<ContextBenchmarkFigures> {
  const progress = options.onProgress ?? (() => {});
  const index = options.index;
  const crossPost: ContextBenchmarkFigures['crossPost'] = [];
  for (const steps of [10, 20, 40]) {
    const naive = await billRun({ workload: billCrossPostWorkload, policy: 'append-only', steps });
    const cached = await billRun({ workload: billCrossPostWorkload, policy: 'caching-only', steps });
    crossPost.push({
      steps,
      naiveUsd: naive.costUsd,
      cachedUsd: cached.costUsd,
      savings: 1 - cached.costUsd / naive.costUsd,
      printed: crossPostPrinted[steps] as string,
    });
  }
  progress('bill cross-post reproduced');

  const configs: { name: string; policy: BillPolicy; breakpoints?: 'rolling' }[] = [
    { name: 'append-only', policy: 'append-only' },
    { name: 'caching-only', policy: 'caching-only' },
    { name: 'caching-only (rolling breakpoint)', policy: 'caching-only', breakpoints: 'rolling' },
    { name: 'cache-policy', policy: 'cache-policy' },
    ...(index ? [{ name: 'cache-policy+retrieval', policy: 'cache-policy+retrieval' as const }] : []),
  ];
  const runs: BillRow[] = [];
  for (const config of configs)
    for (const steps of options.steps ?? billSteps) {
      const started = Date.now();
      const result = await billRun({
        workload: post18Workload,
        policy: config.policy,
        steps,
        ...(config.breakpoints ? { breakpoints: config.breakpoints } : {}),
        ...(index ? { index: () => index() } : {}),
      });
      runs.push({ ...result, policy: config.name });
      progress(`bill ${config.name} ${steps} steps (${Date.now() - started} ms)`);
    }
  const exponents: Record<string, number> = {};
  for (const config of configs) {
    const points = runs
      .filter((row) => row.policy === config.name && row.steps >= fitFromSteps)
      .map((row) => [row.steps, row.billedTokens] as const);
    exponents[config.name] = growthExponent(points);
  }

  const seeds = options.seeds ?? Array.from({ length: 10 }, (_, i) => i + 1);
  const recall: RecallRow[] = [];
  for (const policy of needlePolicies) {
    if (policy === 'retrieval' && !index) continue;
    const results: NeedleRunResult[] = [];
    for (const seed of seeds) results.push(await needleRun(needlePlan(seed), policy as NeedlePolicy, index));
    recall.push(recallRow(policy, results));
    progress(`needle ${policy}`);
  }

  return {
    runs,
    growthExponent: exponents,
    crossPost,
    agreements: seedAgreements(),
    recall,
    parameters: {
      bill: {
        workload: post18Workload,
        budgetTokens: post18BudgetTokens,
        price: crossPostPrice,
        fitFromSteps,
      },
      crossPost: { workload: billCrossPostWorkload },
      needle: { ...needleParameters, budgetTokens: needleBudgetTokens, seeds },
    },
  };
}

/** The means over seeds of one policy's needle runs (peers' runs go through it too). */
export function recallRow(policy: string, results: readonly Omit<NeedleRunResult, 'policy'>[]): RecallRow {
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  return {
    policy,
    recall: mean(results.map((r) => r.score.recall)),
    byKind: {
      constraint: mean(results.map((r) => r.score.byKind.constraint)),
      dead_end: mean(results.map((r) => r.score.byKind.dead_end)),
      id: mean(results.map((r) => r.score.byKind.id)),
    },
    deadEndRetries: mean(results.map((r) => r.deadEndRetries)),
    decisions: needleParameters.deadEnds,
    recalls: mean(results.map((r) => r.recalls)),
    seeds: results.length,
  };
}
