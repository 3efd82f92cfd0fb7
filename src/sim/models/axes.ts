import { amountParam, type ParamSpec, probabilityParam, resolveParams } from '../params.js';
import { tokenCostUsd, tokenPriceParams } from './shared.js';

/**
 * One task's cost across the six axes (post-05, "Your token bill is the cheap part"): tokens,
 * latency priced as a held worker plus any paid person waiting, orchestration and infra, tool
 * fees, human review and idle capacity amortized onto the task. Rates are per second and per
 * minute in USD as the post states them, with hourly inputs for readability.
 */
export interface AxesParams {
  inputTokens: number;
  outputTokens: number;
  inputPrice: number;
  outputPrice: number;
  /** Wall-clock seconds per task. */
  wallSeconds: number;
  /** USD per hour to hold one worker. */
  workerHourly: number;
  /** USD per hour of a paid person blocked on the result (0 when nobody waits). */
  waitHourly: number;
  /** Queue, state store, retrieval, egress: USD per task. */
  orchestration: number;
  toolCalls: number;
  /** USD per tool call. */
  toolFee: number;
  /** Share of tasks that need human review, 0..1. */
  reviewRate: number;
  reviewMinutes: number;
  /** USD per hour for the reviewer. */
  reviewerHourly: number;
  /** Idle or polling seconds amortized onto each task (priced at the worker rate). */
  idleSeconds: number;
}

export const axesDefaults: AxesParams = {
  inputTokens: 12_000,
  outputTokens: 2_400,
  inputPrice: 3,
  outputPrice: 15,
  wallSeconds: 90,
  workerHourly: 0.06,
  waitHourly: 0,
  orchestration: 0,
  toolCalls: 8,
  toolFee: 0.004,
  reviewRate: 1,
  reviewMinutes: 3,
  reviewerHourly: 75,
  idleSeconds: 0,
};

export const axesParamSpecs: readonly ParamSpec[] = [
  amountParam('inputTokens', 'input tokens per task (incl. context growth)', 200_000, 1_000),
  amountParam('outputTokens', 'output tokens per task', 20_000, 100),
  ...tokenPriceParams,
  amountParam('wallSeconds', 'wall-clock seconds per task', 600, 5),
  amountParam('workerHourly', 'USD/hour to hold a worker', 5, 0.01),
  amountParam('waitHourly', 'USD/hour of a paid person waiting on the result', 200, 5),
  amountParam('orchestration', 'USD per task for queue, store, retrieval, egress', 0.5, 0.005),
  amountParam('toolCalls', 'paid tool calls per task', 50, 1),
  amountParam('toolFee', 'USD per tool call', 0.05, 0.001),
  probabilityParam('reviewRate', 'share of tasks a human reviews', 1, 0.01),
  amountParam('reviewMinutes', 'minutes per review', 30, 0.5),
  amountParam('reviewerHourly', 'USD/hour for the reviewer', 200, 5),
  amountParam('idleSeconds', 'idle/polling seconds amortized per task', 3_600, 30),
];

export const axisNames = ['tokens', 'latency', 'orchestration', 'tools', 'human', 'idle'] as const;
export type AxisName = (typeof axisNames)[number];

export interface AxesResult {
  axes: Record<AxisName, number>;
  totalUsd: number;
  /** Each axis as a share of the total (0..1). */
  shares: Record<AxisName, number>;
  /** The axis that costs the most. */
  dominant: AxisName;
}

/**
 * @example
 * costAxes().totalUsd; // 3.8555 — human review is 97 % of it
 * costAxes({ reviewRate: 0, toolFee: 0, waitHourly: 40 }).dominant; // 'latency'
 */
export function costAxes(given?: Partial<AxesParams>): AxesResult {
  const p = resolveParams(axesParamSpecs, axesDefaults, given);
  const axes: Record<AxisName, number> = {
    tokens: tokenCostUsd(p.inputTokens, p.outputTokens, p),
    latency: (p.wallSeconds * (p.workerHourly + p.waitHourly)) / 3600,
    orchestration: p.orchestration,
    tools: p.toolCalls * p.toolFee,
    human: (p.reviewRate * p.reviewMinutes * p.reviewerHourly) / 60,
    idle: (p.idleSeconds * p.workerHourly) / 3600,
  };
  const totalUsd = axisNames.reduce((sum, name) => sum + axes[name], 0);
  const shares = Object.fromEntries(
    axisNames.map((name) => [name, totalUsd > 0 ? axes[name] / totalUsd : 0]),
  ) as Record<AxisName, number>;
  const dominant = axisNames.reduce((best, name) => (axes[name] > axes[best] ? name : best), axisNames[0]);
  return { axes, totalUsd, shares, dominant };
}
