import {
  amplificationModel,
  axesModel,
  cacheModel,
  debugModel,
  digestModel,
  loopCostModel,
  quadraticModel,
  routingModel,
} from './deterministic.js';
import { cascadeModel, compactionModel, latencyModel, retryModel, timeoutModel } from './stochastic.js';
import type { ModelDefinition } from './types.js';

export type { ModelDefinition, ModelRun, ModelTable } from './types.js';

/** Every model, in the order of the simulator issue's table. */
export const simModels: readonly ModelDefinition[] = [
  retryModel,
  quadraticModel,
  cacheModel,
  cascadeModel,
  latencyModel,
  compactionModel,
  axesModel,
  debugModel,
  digestModel,
  amplificationModel,
  routingModel,
  timeoutModel,
  loopCostModel,
];

/** A model by its CLI name, or undefined. */
export function findSimModel(name: string): ModelDefinition | undefined {
  return simModels.find((model) => model.name === name);
}
