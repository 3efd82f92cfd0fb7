import { amountParam, type ParamSpec, resolveParams } from '../params.js';
import { tokenCostUsd, tokenPriceParams } from './shared.js';

/**
 * Nested retry caps multiply (post-14, "the $200 postmortem"): a permanent error retried by
 * every layer costs the product of the layers' attempts. Only the layers that make a model call
 * (`modelLayers`, 1-based positions in `layers`) cost tokens; the others cost time.
 */
export interface AmplificationParams {
  /** Attempts per layer, innermost first: tool 5, model 5, job 3. */
  layers: number[];
  /** 1-based positions of the layers whose attempts are model calls. */
  modelLayers: number[];
  /** Tokens each stuck model call re-reads. */
  context: number;
  /** Tokens each stuck model call emits. */
  output: number;
  /** Poisoned items processed. */
  items: number;
  inputPrice: number;
  outputPrice: number;
}

export const amplificationDefaults: AmplificationParams = {
  layers: [5, 5, 3],
  modelLayers: [2, 3],
  context: 6000,
  output: 400,
  items: 550,
  inputPrice: 3,
  outputPrice: 15,
};

export const amplificationParamSpecs: readonly ParamSpec[] = [
  {
    key: 'layers',
    flag: '--layers',
    kind: 'integers',
    min: 1,
    max: 1_000,
    description: 'attempts per layer, innermost first',
  },
  {
    key: 'modelLayers',
    flag: '--model-layers',
    kind: 'integers',
    min: 1,
    max: 64,
    description: '1-based layers whose attempts are model calls',
  },
  amountParam('context', 'tokens re-read per stuck model call', 50_000, 500),
  amountParam('output', 'tokens emitted per stuck model call', 4_000, 50),
  {
    key: 'items',
    flag: '--items',
    kind: 'integer',
    min: 0,
    description: 'poisoned items',
    slider: { min: 0, max: 10_000, step: 10 },
  },
  ...tokenPriceParams,
];

export interface AmplificationResult {
  /** Product of every layer's attempts: doomed calls to the failing dependency per item. */
  attemptsPerItem: number;
  /** Product of the model layers' attempts. */
  modelCallsPerItem: number;
  costPerItemUsd: number;
  totalUsd: number;
  totalAttempts: number;
  totalModelCalls: number;
}

const crossCheck = (params: AmplificationParams) => {
  const bad = params.modelLayers.find((layer) => layer > params.layers.length);
  if (bad !== undefined) {
    return { key: 'modelLayers', problem: `must name layers 1..${params.layers.length}, got ${bad}` };
  }
  if (new Set(params.modelLayers).size !== params.modelLayers.length) {
    return { key: 'modelLayers', problem: `must not repeat a layer, got ${params.modelLayers.join(',')}` };
  }
  return undefined;
};

/**
 * @example
 * retryAmplification(); // 75 attempts, 15 model calls, $0.36 per item, $198 in all
 */
export function retryAmplification(given?: Partial<AmplificationParams>): AmplificationResult {
  const p = resolveParams(amplificationParamSpecs, amplificationDefaults, given, crossCheck);
  const attemptsPerItem = p.layers.reduce((product, attempts) => product * attempts, 1);
  const modelCallsPerItem = p.modelLayers.reduce((product, layer) => product * (p.layers[layer - 1] ?? 1), 1);
  const costPerItemUsd = modelCallsPerItem * tokenCostUsd(p.context, p.output, p);
  return {
    attemptsPerItem,
    modelCallsPerItem,
    costPerItemUsd,
    totalUsd: costPerItemUsd * p.items,
    totalAttempts: attemptsPerItem * p.items,
    totalModelCalls: modelCallsPerItem * p.items,
  };
}
