/** How a chart's axis labels its numbers. */
export type ChartFormat = 'number' | 'percent' | 'usd' | 'ms' | 'tokens' | 'multiplier' | 'seconds';

/**
 * A chart as data: what the CLI's `--plot` writes as SVG and the lab draws, from the same
 * numbers the model returned. Rendering lives in `reins/plot`.
 */
export interface ChartSpec {
  title: string;
  x: { label: string; format?: ChartFormat; log?: boolean };
  y: { label: string; format?: ChartFormat; log?: boolean; min?: number };
  lines?: { name: string; points: (readonly [number, number])[]; dashed?: boolean; step?: boolean }[];
  /** A histogram: one bar per bin. */
  bins?: { name: string; bins: { x0: number; x1: number; y: number }[] };
  /** Horizontal stacked bars, one per row (the cost axes). */
  stacked?: { rows: { name: string; segments: { name: string; value: number }[] }[] };
  /** Vertical rules at x, labelled (p50, p95, p99, the current parameter). */
  rules?: { x: number; label: string }[];
  /** Highlighted points (the optimum, the value at the current parameters). */
  points?: { x: number; y: number; label: string }[];
}

/** Evenly spaced values from `from` to `to`, both included. */
export function sweep(from: number, to: number, count: number): number[] {
  if (count < 2) return [from];
  return Array.from({ length: count }, (_, i) => from + ((to - from) * i) / (count - 1));
}

/**
 * Whole step counts from 1 to `longest` for a chart: every one up to `maxPoints`, else that many
 * evenly spaced (a million-step chart needs no million points, and each costs a model evaluation).
 */
export function stepSweep(longest: number, maxPoints = 400): number[] {
  if (longest <= maxPoints) return sweep(1, longest, longest);
  return [...new Set(sweep(1, longest, maxPoints).map((n) => Math.round(n)))];
}

/** A line series of `f` over `xs`: `curve('restart', sweep(0, 0.35, 71), (p) => multiplier(p))`. */
export function curve(
  name: string,
  xs: readonly number[],
  f: (x: number) => number,
  style: { dashed?: boolean; step?: boolean } = {},
): NonNullable<ChartSpec['lines']>[number] {
  return { name, points: xs.map((x) => [x, f(x)] as const), ...style };
}
