import type { ChartSpec } from '../chart.js';
import type { MonteCarloOptions } from '../monte-carlo.js';
import type { ParamSpec } from '../params.js';

/** A table as the posts print them: a heading row and rows of already formatted cells. */
export interface ModelTable {
  title?: string;
  head: string[];
  rows: string[][];
}

/** Everything one evaluation of a model produces, for the CLI and the lab alike. */
export interface ModelRun {
  /** The `--json` output: camelCase keys, raw numbers. */
  json: Record<string, unknown>;
  tables: ModelTable[];
  chart: ChartSpec;
  /** One-line readings of the result ("20 % failure costs ×1.37 in place, ×2.62 with restarts"). */
  notes: string[];
}

/** A model as the CLI and the lab see it: its parameters, where it comes from, how to run it. */
export interface ModelDefinition {
  name: string;
  title: string;
  /** The seed document it reproduces. */
  source: string;
  params: readonly ParamSpec[];
  defaults: Readonly<Record<string, unknown>>;
  /** Present when the model draws a Monte Carlo sample; the post's trial count. */
  monteCarlo?: { defaultTrials: (params: Record<string, unknown>) => number };
  run(params: Record<string, unknown>, options?: MonteCarloOptions): ModelRun;
}

/** Defines a model with its parameter type checked against its run function. */
export function defineModel<P extends object>(definition: {
  name: string;
  title: string;
  source: string;
  params: readonly ParamSpec[];
  defaults: P;
  monteCarlo?: { defaultTrials: (params: P) => number };
  run(params: Partial<P>, options?: MonteCarloOptions): ModelRun;
}): ModelDefinition {
  return definition as unknown as ModelDefinition;
}
