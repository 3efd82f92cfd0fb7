import { curve, stepSweep, sweep } from '../chart.js';
import {
  amplificationDefaults,
  amplificationParamSpecs,
  retryAmplification,
} from '../models/amplification.js';
import { axesDefaults, axesParamSpecs, axisNames, costAxes } from '../models/axes.js';
import { cacheCost, cacheDefaults, cacheParamSpecs } from '../models/cache.js';
import { debugDefaults, debugParamSpecs, reproductionTax } from '../models/debug.js';
import { digestCost, digestDefaults, digestParamSpecs } from '../models/digest.js';
import { loopCost, loopCostDefaults, loopCostParamSpecs, loopCostSteps } from '../models/loop-cost.js';
import { quadraticCost, quadraticDefaults, quadraticParamSpecs } from '../models/quadratic.js';
import { routingCost, routingDefaults, routingParamSpecs } from '../models/routing.js';
import { withDefaults } from '../params.js';
import { int, pct, times, usd } from './format.js';
import { defineModel } from './types.js';

export const quadraticModel = defineModel({
  name: 'quadratic',
  title: 'A long run costs O(N²) tokens',
  source: 'post-09 (long runs are quadratic)',
  params: quadraticParamSpecs,
  defaults: quadraticDefaults,
  run(given) {
    const result = quadraticCost(given);
    const params = withDefaults(quadraticDefaults, given);
    const kept = params.kept ?? params.result;
    const digest = Math.min(40, kept);
    const lengths = [10, 20, 40, 80]
      .filter((n) => n !== params.steps)
      .concat(params.steps)
      .sort((a, b) => a - b);
    const longest = Math.max(80, params.steps);
    const at = (steps: number, keptTokens: number) =>
      quadraticCost({ ...params, steps, kept: keptTokens }).costUsd;
    return {
      json: { params, ...result },
      tables: [
        {
          title: `system ${params.system}, output ${params.output}, result ${params.result}, kept ${kept}`,
          head: ['steps', 'cost', 'vs half as many steps', `results cut to ${digest}-token digests`],
          rows: lengths.map((steps) => [
            steps === params.steps ? `${steps} ◀` : String(steps),
            usd(at(steps, kept)),
            steps >= 2 ? times(at(steps, kept) / at(Math.floor(steps / 2), kept), 1) : '—',
            usd(at(steps, digest)),
          ]),
        },
      ],
      chart: {
        title: 'Run cost versus steps, and the flattening moves',
        x: { label: 'steps in the run' },
        y: { label: 'cost per run', format: 'usd' },
        lines: [
          curve(`every result kept (${kept} tokens)`, stepSweep(longest), (n) => at(n, kept)),
          curve(`results cut to ${digest}-token digests`, stepSweep(longest), (n) => at(n, digest)),
          {
            name: 'digests + cached prefix',
            points: stepSweep(longest).map(
              (n) =>
                [
                  n,
                  cacheCost({
                    steps: n,
                    system: params.system,
                    output: params.output,
                    result: digest,
                    inputPrice: params.inputPrice,
                    outputPrice: params.outputPrice,
                  }).cachedUsd,
                ] as const,
            ),
          },
          curve('linear (first step × N)', stepSweep(longest), (n) => at(1, kept) * n, {
            dashed: true,
          }),
        ],
        points: [{ x: params.steps, y: result.costUsd, label: usd(result.costUsd) }],
      },
      notes: [
        `${int(result.inputTokens)} input tokens over ${params.steps} steps; the last step alone sends ${int(result.lastPrefillTokens)}.`,
      ],
    };
  },
});

export const cacheModel = defineModel({
  name: 'cache',
  title: 'Caching flattens the floor, not the slope',
  source: 'dev-feed-crossposts (the bill post)',
  params: cacheParamSpecs,
  defaults: cacheDefaults,
  run(given) {
    const result = cacheCost(given);
    const params = withDefaults(cacheDefaults, given);
    const lengths = [10, 20, 40]
      .filter((n) => n !== params.steps)
      .concat(params.steps)
      .sort((a, b) => a - b);
    const longest = Math.max(80, params.steps);
    return {
      json: { params, ...result },
      tables: [
        {
          title: `best-of-${params.bestOf}`,
          head: ['steps', 'naive', 'cached', 'savings'],
          rows: lengths.map((steps) => {
            const row = cacheCost({ ...params, steps });
            return [
              steps === params.steps ? `${steps} ◀` : String(steps),
              usd(row.naiveUsd),
              usd(row.cachedUsd),
              pct(row.savings),
            ];
          }),
        },
      ],
      chart: {
        title: 'Prompt-cache savings shrink as the run grows',
        x: { label: 'steps in the run' },
        y: { label: 'savings from caching the prefix', format: 'percent', min: 0 },
        lines: [curve('savings', stepSweep(longest), (n) => cacheCost({ ...params, steps: n }).savings)],
        points: [{ x: params.steps, y: result.savings, label: pct(result.savings) }],
      },
      notes: [
        `Caching saves ${pct(result.savings)} at ${params.steps} steps; best-of-${params.bestOf} multiplies whatever is left by ${params.bestOf}.`,
      ],
    };
  },
});

export const digestModel = defineModel({
  name: 'digest',
  title: 'Where compaction alone runs out',
  source: 'dev-feed-crossposts (the transcript-retrieval post)',
  params: digestParamSpecs,
  defaults: digestDefaults,
  run(given) {
    const result = digestCost(given);
    const params = withDefaults(digestDefaults, given);
    const lengths = [100, 500, 2000, 5000]
      .filter((n) => n !== params.steps)
      .concat(params.steps)
      .sort((a, b) => a - b);
    const longest = Math.max(5000, params.steps);
    return {
      json: { params, ...result },
      tables: [
        {
          title: `${params.digest}-token digest per ${params.chunk} steps`,
          head: ['steps', 'cost', 'digest tokens re-sent by the last step'],
          rows: lengths.map((steps) => {
            const row = digestCost({ ...params, steps });
            return [
              steps === params.steps ? `${steps} ◀` : String(steps),
              usd(row.costUsd, 3),
              int(row.lastDigestTokens),
            ];
          }),
        },
      ],
      chart: {
        title: 'Accumulated digests: quadratic with a late onset',
        x: { label: 'steps in the run' },
        y: { label: 'cost per run', format: 'usd' },
        lines: [
          curve(
            'with accumulated digests',
            sweep(1, longest, 200),
            (n) => digestCost({ ...params, steps: Math.round(n) }).costUsd,
          ),
          curve(
            'no digests (linear floor)',
            sweep(1, longest, 200),
            (n) => digestCost({ ...params, steps: Math.round(n), digest: 0 }).costUsd,
            { dashed: true },
          ),
        ],
        points: [{ x: params.steps, y: result.costUsd, label: usd(result.costUsd, 3) }],
      },
      notes: [
        `The last step re-sends ${int(result.lastDigestTokens)} digest tokens on top of the ${int(params.system)}-token prompt.`,
      ],
    };
  },
});

export const loopCostModel = defineModel({
  name: 'loop-cost',
  title: "The lesson's bill: the sum of prefix sizes",
  source: 'lesson-agents (cost table, estimate rule, practice problem 1)',
  params: loopCostParamSpecs,
  defaults: loopCostDefaults,
  run(given) {
    const result = loopCost(given);
    const params = withDefaults(loopCostDefaults, given);
    const rows = loopCostSteps(params);
    const longest = Math.max(20, params.steps);
    return {
      json: { params, ...result },
      tables: [
        {
          title: `base ${int(params.base)}, result ${int(params.result)} tokens`,
          head: ['step', 'sent', 'billed so far'],
          rows: rows.map((row) => [String(row.step), int(row.sentTokens), int(row.billedSoFar)]),
        },
        {
          head: ['billed', 'final context', '× one call', 'estimate rule', 'steps × base'],
          rows: [
            [
              int(result.billedTokens),
              int(result.finalContextTokens),
              times(result.ratioToOneStep, 1),
              int(result.estimateRuleTokens),
              int(result.independentCallsTokens),
            ],
          ],
        },
      ],
      chart: {
        title: 'Billed tokens versus steps',
        x: { label: 'steps' },
        y: { label: 'tokens billed', format: 'tokens' },
        lines: [
          curve(
            'sum of prefixes (billed)',
            stepSweep(longest),
            (n) => loopCost({ ...params, steps: n }).billedTokens,
          ),
          curve(
            'estimate rule',
            stepSweep(longest),
            (n) => loopCost({ ...params, steps: n }).estimateRuleTokens,
            { dashed: true },
          ),
          curve('steps × base', stepSweep(longest), (n) => n * params.base, { dashed: true }),
        ],
        points: [{ x: params.steps, y: result.billedTokens, label: int(result.billedTokens) }],
      },
      notes: [
        `${params.steps} steps bill ${times(result.ratioToOneStep, 1)} one call, not ×${params.steps}.`,
      ],
    };
  },
});

export const axesModel = defineModel({
  name: 'axes',
  title: 'Six cost axes, one task',
  source: 'post-05 (cost beyond tokens)',
  params: axesParamSpecs,
  defaults: axesDefaults,
  run(given) {
    const result = costAxes(given);
    const params = withDefaults(axesDefaults, given);
    const sorted = [...axisNames].sort((a, b) => result.axes[b] - result.axes[a]);
    return {
      json: { params, ...result },
      tables: [
        {
          head: ['axis', 'USD per task', 'share'],
          rows: [
            ...sorted.map((name) => [name, usd(result.axes[name]), pct(result.shares[name])]),
            ['TOTAL', usd(result.totalUsd), ''],
          ],
        },
      ],
      chart: {
        title: 'Where one task’s money goes',
        x: { label: 'USD per task', format: 'usd' },
        y: { label: '' },
        stacked: {
          rows: [
            { name: 'per task', segments: axisNames.map((name) => ({ name, value: result.axes[name] })) },
          ],
        },
      },
      notes: [
        `${result.dominant} is ${pct(result.shares[result.dominant])} of the cost; tokens are ${pct(result.shares.tokens)}.`,
      ],
    };
  },
});

export const debugModel = defineModel({
  name: 'debug',
  title: 'The reproduction tax',
  source: 'post-02 (debugging costs more)',
  params: debugParamSpecs,
  defaults: debugDefaults,
  run(given) {
    const result = reproductionTax(given);
    const params = withDefaults(debugDefaults, given);
    return {
      json: { params, ...result },
      tables: [
        {
          head: ['runs to reproduce', 'token cost', 'engineer time', 'total', 'tracing pays above'],
          rows: [
            [
              int(result.expectedRuns),
              usd(result.tokenCostUsd, 2),
              usd(result.engineerCostUsd, 2),
              usd(result.totalUsd, 2),
              `p = ${result.breakEvenFailureRate.toPrecision(3)} (1 in ${int(1 / result.breakEvenFailureRate)})`,
            ],
          ],
        },
      ],
      chart: {
        title: 'Cost to reproduce one failure by re-running',
        x: { label: 'failure probability per run', format: 'percent', log: true },
        y: { label: 'reproduction tax', format: 'usd', log: true },
        lines: [
          {
            name: 'tokens + engineer time',
            points: sweep(-3, -0.3, 60).map(
              (e) => [10 ** e, reproductionTax({ ...params, p: 10 ** e }).totalUsd] as const,
            ),
          },
        ],
        points: [{ x: params.p, y: result.totalUsd, label: usd(result.totalUsd, 2) }],
      },
      notes: [
        `The tokens are ${usd(result.tokenCostUsd, 2)}; the engineer waiting is ${usd(result.engineerCostUsd, 2)}.`,
      ],
    };
  },
});

export const amplificationModel = defineModel({
  name: 'amplification',
  title: 'Nested retries multiply',
  source: 'post-14 (the $200 postmortem)',
  params: amplificationParamSpecs,
  defaults: amplificationDefaults,
  run(given) {
    const result = retryAmplification(given);
    const params = withDefaults(amplificationDefaults, given);
    let cumulative = 1;
    const points = params.layers.map((attempts, index) => {
      cumulative *= attempts;
      return [index + 1, cumulative] as const;
    });
    return {
      json: { params, ...result },
      tables: [
        {
          head: [
            'attempts/item',
            'model calls/item',
            '$/item',
            'items',
            'total',
            'attempts in all',
            'model calls in all',
          ],
          rows: [
            [
              String(result.attemptsPerItem),
              String(result.modelCallsPerItem),
              usd(result.costPerItemUsd, 3),
              int(params.items),
              usd(result.totalUsd, 2),
              int(result.totalAttempts),
              int(result.totalModelCalls),
            ],
          ],
        },
      ],
      chart: {
        title: 'Doomed attempts per item as retry layers nest',
        x: { label: 'layers (innermost first)' },
        y: { label: 'attempts per poisoned item', min: 0 },
        lines: [{ name: 'cumulative attempts', points: [[0, 1], ...points], step: true }],
        points: [
          { x: params.layers.length, y: result.attemptsPerItem, label: `${result.attemptsPerItem} attempts` },
        ],
      },
      notes: [
        `${params.layers.join(' × ')} = ${result.attemptsPerItem} doomed attempts per item; the model layers make ${result.modelCallsPerItem} paid calls of them.`,
      ],
    };
  },
});

export const routingModel = defineModel({
  name: 'routing',
  title: 'Cheap first, smart later',
  source: 'post-06 (model routing)',
  params: routingParamSpecs,
  defaults: routingDefaults,
  run(given) {
    const result = routingCost(given);
    const params = withDefaults(routingDefaults, given);
    return {
      json: { params, ...result },
      tables: [
        {
          head: ['cascade cost', 'vs all-expensive', 'savings', 'wrong answers'],
          rows: [
            [
              `${result.cascadeCost.toFixed(2)} N`,
              `${(params.ratio).toFixed(2)} N`,
              pct(result.savings),
              pct(result.wrongAnswerRate),
            ],
          ],
        },
      ],
      chart: {
        title: 'Routing: savings you can compute, errors you must measure',
        x: { label: 'misroute rate (cheap-only answers that needed escalating)', format: 'percent' },
        y: { label: 'share of traffic', format: 'percent', min: 0 },
        lines: [
          curve('token savings', sweep(0, 0.5, 51), (m) => routingCost({ ...params, misroute: m }).savings),
          curve(
            'wrong answers shipped',
            sweep(0, 0.5, 51),
            (m) => routingCost({ ...params, misroute: m }).wrongAnswerRate,
          ),
        ],
        points: [{ x: params.misroute, y: result.wrongAnswerRate, label: pct(result.wrongAnswerRate) }],
      },
      notes: [
        `Savings ${pct(result.savings, 0)}, bought with ${pct(result.wrongAnswerRate)} of traffic answered wrong without a trace.`,
      ],
    };
  },
});
