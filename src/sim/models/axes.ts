import { type ParamSpec, resolveParams } from '../params.js';
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
  {
    key: 'inputTokens',
    flag: '--input-tokens',
    kind: 'number',
    min: 0,
    description: 'input tokens per task (incl. context growth)',
    slider: { min: 0, max: 200_000, step: 1_000 },
  },
  {
    key: 'outputTokens',
    flag: '--output-tokens',
    kind: 'number',
    min: 0,
    description: 'output tokens per task',
    slider: { min: 0, max: 20_000, step: 100 },
  },
  ...tokenPriceParams,
  {
    key: 'wallSeconds',
    flag: '--wall-seconds',
    kind: 'number',
    min: 0,
    description: 'wall-clock seconds per task',
    slider: { min: 0, max: 600, step: 5 },
  },
  {
    key: 'workerHourly',
    flag: '--worker-hourly',
    kind: 'number',
    min: 0,
    description: 'USD/hour to hold a worker',
    slider: { min: 0, max: 5, step: 0.01 },
  },
  {
    key: 'waitHourly',
    flag: '--wait-hourly',
    kind: 'number',
    min: 0,
    description: 'USD/hour of a paid person waiting on the result',
    slider: { min: 0, max: 200, step: 5 },
  },
  {
    key: 'orchestration',
    flag: '--orchestration',
    kind: 'number',
    min: 0,
    description: 'USD per task for queue, store, retrieval, egress',
    slider: { min: 0, max: 0.5, step: 0.005 },
  },
  {
    key: 'toolCalls',
    flag: '--tool-calls',
    kind: 'number',
    min: 0,
    description: 'paid tool calls per task',
    slider: { min: 0, max: 50, step: 1 },
  },
  {
    key: 'toolFee',
    flag: '--tool-fee',
    kind: 'number',
    min: 0,
    description: 'USD per tool call',
    slider: { min: 0, max: 0.05, step: 0.001 },
  },
  {
    key: 'reviewRate',
    flag: '--review-rate',
    kind: 'number',
    min: 0,
    max: 1,
    description: 'share of tasks a human reviews',
    slider: { min: 0, max: 1, step: 0.01 },
  },
  {
    key: 'reviewMinutes',
    flag: '--review-minutes',
    kind: 'number',
    min: 0,
    description: 'minutes per review',
    slider: { min: 0, max: 30, step: 0.5 },
  },
  {
    key: 'reviewerHourly',
    flag: '--reviewer-hourly',
    kind: 'number',
    min: 0,
    description: 'USD/hour for the reviewer',
    slider: { min: 0, max: 200, step: 5 },
  },
  {
    key: 'idleSeconds',
    flag: '--idle-seconds',
    kind: 'number',
    min: 0,
    description: 'idle/polling seconds amortized per task',
    slider: { min: 0, max: 3_600, step: 30 },
  },
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
