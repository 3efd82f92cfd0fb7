import { simModels } from '../../src/sim/index.js';
import type { ParamSpec } from '../../src/sim/params.js';

/** What a playground needs to know about a model: its parameters, defaults and trial count. */
export interface ModelSummary {
  name: string;
  title: string;
  source: string;
  params: readonly ParamSpec[];
  defaults: Readonly<Record<string, unknown>>;
  defaultTrials: number | undefined;
}

export const modelList: readonly ModelSummary[] = simModels.map((model) => ({
  name: model.name,
  title: model.title,
  source: model.source,
  params: model.params,
  defaults: model.defaults,
  defaultTrials: model.monteCarlo?.defaultTrials(model.defaults as Record<string, unknown>),
}));
