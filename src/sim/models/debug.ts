import { amountParam, type ParamSpec, resolveParams } from '../params.js';

/**
 * The reproduction tax (post-02, "Debugging a failed run costs more"): to see a failure of
 * probability p again by re-running, expect 1/p runs, each costing tokens and an engineer's
 * time waiting on it. Tracing every run costs `traceCost` per run instead.
 */
export interface DebugParams {
  /** Probability the failure shows up in one run. */
  p: number;
  /** USD in tokens and tool calls per run. */
  runCost: number;
  runSeconds: number;
  /** USD per hour for the engineer waiting. */
  engineerRate: number;
  /** USD per run to keep a full trace. */
  traceCost: number;
}

export const debugDefaults: DebugParams = {
  p: 0.02,
  runCost: 0.05,
  runSeconds: 40,
  engineerRate: 120,
  traceCost: 0.01,
};

export const debugParamSpecs: readonly ParamSpec[] = [
  {
    key: 'p',
    flag: '--p',
    kind: 'number',
    min: 0,
    max: 1,
    minExclusive: true,
    description: 'failure probability per run',
    slider: { min: 0.001, max: 0.5, step: 0.001 },
  },
  amountParam('runCost', 'USD per run (tokens + tools)', 2, 0.01),
  amountParam('runSeconds', 'wall-clock seconds per run', 600, 5),
  amountParam('engineerRate', 'USD/hour for the engineer', 300, 5),
  amountParam('traceCost', 'USD per run to keep a trace', 0.1, 0.001),
];

export interface DebugResult {
  /** 1/p: runs until the failure is seen once (geometric mean). */
  expectedRuns: number;
  tokenCostUsd: number;
  engineerCostUsd: number;
  /** The reproduction tax: tokens plus engineer time, before any fix. */
  totalUsd: number;
  /**
   * The failure rate below which tracing costs more than it saves, pricing the tax at this
   * p as the post does: traceCost ÷ totalUsd. (If each failure were re-reproduced at its own
   * 1/p, p × tax is constant — runCost + runSeconds × rate — and tracing wins at every p.)
   */
  breakEvenFailureRate: number;
}

/**
 * @example
 * reproductionTax(); // expectedRuns 50, tokens $2.50, engineer $66.67, total $69.17
 */
export function reproductionTax(given?: Partial<DebugParams>): DebugResult {
  const p = resolveParams(debugParamSpecs, debugDefaults, given);
  const expectedRuns = 1 / p.p;
  const tokenCostUsd = expectedRuns * p.runCost;
  const engineerCostUsd = (expectedRuns * p.runSeconds * p.engineerRate) / 3600;
  const totalUsd = tokenCostUsd + engineerCostUsd;
  return {
    expectedRuns,
    tokenCostUsd,
    engineerCostUsd,
    totalUsd,
    breakEvenFailureRate: totalUsd > 0 ? p.traceCost / totalUsd : Number.POSITIVE_INFINITY,
  };
}
