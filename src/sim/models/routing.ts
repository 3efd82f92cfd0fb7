import { type ParamSpec, probabilityParam, resolveParams } from '../params.js';

/**
 * Cheap first, smart later (post-06): every request goes to the cheap model; the ones the
 * trigger escalates pay for both calls. `misroute` is the share of the requests the trigger kept
 * on the cheap model that actually needed the expensive one — shipped wrong, silently.
 */
export interface RoutingParams {
  /** Share of requests the cascade answers with the cheap model alone. */
  easy: number;
  /** Expensive ÷ cheap price per request. */
  ratio: number;
  /** Share of cheap-only answers that needed escalating. */
  misroute: number;
}

export const routingDefaults: RoutingParams = { easy: 0.7, ratio: 15, misroute: 0.1 };

export const routingParamSpecs: readonly ParamSpec[] = [
  probabilityParam('easy', 'share answered by the cheap model alone', 1, 0.01),
  {
    key: 'ratio',
    flag: '--ratio',
    kind: 'number',
    min: 1,
    description: 'expensive ÷ cheap cost per request',
    slider: { min: 1, max: 60, step: 0.5 },
  },
  probabilityParam('misroute', 'share of cheap-only answers that needed escalating', 0.5, 0.01),
];

export interface RoutingResult {
  /** Cascade cost ÷ sending everything to the expensive model. */
  costRelative: number;
  /** 1 − costRelative. */
  savings: number;
  /** Share of all traffic answered wrong by the cheap model: easy × misroute. */
  wrongAnswerRate: number;
  /** Cascade cost in units of one cheap call per request. */
  cascadeCost: number;
}

/**
 * @example
 * routingCost(); // costRelative 0.3667 (5.5 ÷ 15), savings 63 %, wrong answers 7 %
 */
export function routingCost(given?: Partial<RoutingParams>): RoutingResult {
  const { easy, ratio, misroute } = resolveParams(routingParamSpecs, routingDefaults, given);
  const cascadeCost = easy * 1 + (1 - easy) * (1 + ratio);
  const costRelative = cascadeCost / ratio;
  return { costRelative, savings: 1 - costRelative, wrongAnswerRate: easy * misroute, cascadeCost };
}
