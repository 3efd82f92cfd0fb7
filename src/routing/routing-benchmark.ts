import { costUsdOf, type PriceTable, resolvePrice } from '../controls/price.js';
import { quantileOfSorted } from '../eval/quantile.js';
import { textOf } from '../model/content.js';
import type { Model, ModelResponse } from '../model/model.js';
import { routingCost } from '../sim/models/routing.js';
import { fakeClock } from '../testing/fake-clock.js';
import { seededRandom } from '../testing/seeded-random.js';
import type { StandardSchema } from '../tools/standard-schema.js';
import {
  type CalibrateTriggerOptions,
  calibrateTrigger,
  type LabeledSample,
  type TriggerCalibration,
} from './calibrate-trigger.js';
import { cascadeModel } from './cascade-model.js';
import { cascadeRecordOf } from './cascade-record.js';
import { confidenceTrigger } from './confidence-trigger.js';
import { anyTrigger, type EscalationTrigger } from './escalation-trigger.js';
import { judgeTrigger } from './judge-trigger.js';
import {
  type RoutingWorkloadParams,
  routingWorkload,
  routingWorkloadDefaults,
  routingWorkloadPrices,
  routingWorkloadTiers,
  type WorkloadRequest,
  workloadModelRequest,
} from './routing-workload.js';
import { structuralTrigger } from './structural-trigger.js';
import type { TriggerThreshold } from './trigger-threshold.js';

export interface RoutingBenchmarkOptions {
  /** @default routingWorkloadDefaults */
  workload?: RoutingWorkloadParams;
  /** Labeled requests the thresholds are fitted on. @default 4000 */
  calibrationSize?: number;
  /** Requests every strategy answers. @default 10000 */
  testSize?: number;
  /** Disjoint streams: the test set never sees a calibration request. @default 601, 602 */
  calibrationSeed?: number;
  testSeed?: number;
  /**
   * What `cascade-calibrated` (and the judge's) calibration must meet: accuracy lost against
   * all-strong, the quality bar's own figure. @default 0.01 (one point), upper bound
   */
  targetAccuracyLoss?: number;
  /** What `cascade-calibrated-misroute` must meet instead: the stricter misroute target. @default 0.01 */
  targetMisrouteRate?: number;
  bound?: CalibrateTriggerOptions['bound'];
}

/** One strategy's figures on the test set. */
export interface RoutingStrategyResult {
  name: string;
  costUsd: number;
  /** Share of answers right by the label. */
  accuracy: number;
  /** Requests kept on the cheap tier while its answer was wrong, as a share of all. */
  misrouteRate: number;
  escalationRate: number;
  /** 1 − costUsd ÷ all-strong's. */
  savings: number;
  p50Ms: number;
  p99Ms: number;
  /** The threshold the strategy's scored trigger used, when it has one. */
  threshold?: number;
}

export interface RoutingBenchmarkResult {
  workload: RoutingWorkloadParams;
  calibrationSize: number;
  testSize: number;
  seeds: { calibration: number; test: number };
  targetAccuracyLoss: number;
  targetMisrouteRate: number;
  strategies: RoutingStrategyResult[];
  calibrations: {
    confidence: TriggerCalibration;
    confidenceByMisroute: TriggerCalibration;
    confidenceAlone: TriggerCalibration;
    judge: TriggerCalibration;
  };
  /**
   * `reins model routing` (the prediction) against the calibrated cascade (the measurement): the
   * simulator given the cascade's measured cheap-only share, and at the workload's own parameters.
   */
  simulator: {
    measuredSavings: number;
    predictedSavings: number;
    difference: number;
    /** The share the cascade answered with the cheap tier alone, passed as the simulator's `easy`. */
    cheapOnlyShare: number;
    /** Of the cheap-only answers, the share that were wrong: the simulator's `misroute`. */
    cheapOnlyMisroute: number;
    /** The simulator's wrong-answer rate at those two (easy × misroute), beside the measured misroute rate. */
    predictedWrongAnswerRate: number;
    /** The simulator at `easy` = the workload's easy share: what a perfect trigger would save. */
    predictedAtWorkloadEasyShare: number;
  };
}

/** The answer must be JSON `{ answer: string, confidence?: number }`: the structural check. */
const answerSchema: StandardSchema = {
  '~standard': {
    version: 1,
    vendor: 'reins',
    validate(value) {
      const answer = (value as { answer?: unknown } | null)?.answer;
      return typeof answer === 'string' ? { value } : { issues: [{ message: 'no string "answer"' }] };
    },
  },
};

/**
 * `reins bench routing`: a seeded synthetic workload with easy/hard labels, scripted tiers drawn
 * from stated distributions, thresholds fitted on one seed's requests and every strategy measured
 * through `cascadeModel` on another's. Deterministic: the same options give the same figures.
 */
export async function runRoutingBenchmark(
  options: RoutingBenchmarkOptions = {},
): Promise<RoutingBenchmarkResult> {
  const workload = options.workload ?? routingWorkloadDefaults;
  const calibrationSize = options.calibrationSize ?? 4000;
  const testSize = options.testSize ?? 10_000;
  const seeds = { calibration: options.calibrationSeed ?? 601, test: options.testSeed ?? 602 };
  const targetAccuracyLoss = options.targetAccuracyLoss ?? 0.01;
  const targetMisrouteRate = options.targetMisrouteRate ?? 0.01;
  const bound = options.bound ?? 'upper';
  const prices = routingWorkloadPrices(workload);
  const structural = () => structuralTrigger({ textSchema: answerSchema });

  // Calibration: the cheap tier's answers on the calibration set, labeled.
  const calibrationSet = routingWorkload(calibrationSize, seeds.calibration, workload, 'cal-');
  const calibrationClock = fakeClock();
  const calibrationTiers = routingWorkloadTiers(calibrationSet, calibrationClock);
  const samples: LabeledSample[] = [];
  for (const item of calibrationSet) {
    const request = workloadModelRequest(item);
    const response = await calibrationTiers.cheap.generate(request);
    samples.push({
      id: item.id,
      request,
      response,
      needsEscalation: !item.cheap.right,
      strongCorrect: item.strong.right,
      cheapCost: costOf(prices, 'workload-cheap', response),
      strongCost: costOf(prices, 'workload-strong', response),
      cheapLatencyMs: item.cheap.latencyMs,
      strongLatencyMs: item.strong.latencyMs,
    });
  }
  const calibrate = (trigger: EscalationTrigger, target: 'accuracy' | 'misroute' = 'accuracy') =>
    calibrateTrigger(trigger, samples, {
      ...(target === 'accuracy' ? { targetAccuracyLoss } : { targetMisrouteRate }),
      bound,
      random: seededRandom(seeds.calibration),
      clock: calibrationClock,
    });
  const confidence = await calibrate(anyTrigger(structural(), confidenceTrigger({ threshold: 0.5 })));
  const confidenceByMisroute = await calibrate(
    anyTrigger(structural(), confidenceTrigger({ threshold: 0.5 })),
    'misroute',
  );
  const confidenceAlone = await calibrate(confidenceTrigger({ threshold: 0.5 }));
  const judge = await calibrate(
    anyTrigger(structural(), judgeTrigger({ judge: calibrationTiers.judge, threshold: 0.5 })),
  );
  const fitted = (calibration: TriggerCalibration): number | TriggerThreshold =>
    calibration.kind === 'met' ? calibration.threshold : calibration.atThreshold;

  // Measurement: every strategy answers the same test set through the real cascade.
  const testSet = routingWorkload(testSize, seeds.test, workload, 'test-');
  const strategies: RoutingStrategyResult[] = [];
  const run = async (
    name: string,
    build: (tiers: ReturnType<typeof routingWorkloadTiers>) => Model,
    threshold?: number | TriggerThreshold,
  ) => {
    const clock = fakeClock();
    const tiers = routingWorkloadTiers(testSet, clock);
    const model = build(tiers);
    strategies.push({
      ...(await measure(name, model, testSet, clock, prices)),
      ...(threshold !== undefined
        ? { threshold: typeof threshold === 'number' ? threshold : threshold.value }
        : {}),
    });
  };
  const cascade =
    (escalate: (tiers: ReturnType<typeof routingWorkloadTiers>) => EscalationTrigger) =>
    (tiers: ReturnType<typeof routingWorkloadTiers>) =>
      cascadeModel({ tiers: [tiers.cheap, tiers.strong], escalate: escalate(tiers), prices });
  await run('all-cheap', (tiers) => tiers.cheap);
  await run('all-strong', (tiers) => tiers.strong);
  await run(
    'cascade-structural',
    cascade(() => structural()),
  );
  await run(
    'cascade-uncalibrated',
    cascade(() => anyTrigger(structural(), confidenceTrigger({ threshold: 0.5 }))),
    0.5,
  );
  await run(
    'cascade-calibrated',
    cascade(() => anyTrigger(structural(), confidenceTrigger({ threshold: fitted(confidence) }))),
    fitted(confidence),
  );
  await run(
    'cascade-calibrated-misroute',
    cascade(() => anyTrigger(structural(), confidenceTrigger({ threshold: fitted(confidenceByMisroute) }))),
    fitted(confidenceByMisroute),
  );
  await run(
    'cascade-confidence-only-calibrated',
    cascade(() => confidenceTrigger({ threshold: fitted(confidenceAlone) })),
    fitted(confidenceAlone),
  );
  await run(
    'cascade-judge-uncalibrated',
    cascade((tiers) => anyTrigger(structural(), judgeTrigger({ judge: tiers.judge, threshold: 0.5 }))),
    0.5,
  );
  await run(
    'cascade-judge-calibrated',
    cascade((tiers) =>
      anyTrigger(structural(), judgeTrigger({ judge: tiers.judge, threshold: fitted(judge) })),
    ),
    fitted(judge),
  );

  const allStrong = strategies.find((s) => s.name === 'all-strong') as RoutingStrategyResult;
  for (const strategy of strategies) strategy.savings = 1 - strategy.costUsd / allStrong.costUsd;
  const calibrated = strategies.find((s) => s.name === 'cascade-calibrated') as RoutingStrategyResult;
  const cheapOnlyShare = 1 - calibrated.escalationRate;
  const cheapOnlyMisroute = cheapOnlyShare > 0 ? calibrated.misrouteRate / cheapOnlyShare : 0;
  const predicted = routingCost({
    easy: cheapOnlyShare,
    ratio: workload.priceRatio,
    misroute: cheapOnlyMisroute,
  });
  return {
    workload,
    calibrationSize,
    testSize,
    seeds,
    targetAccuracyLoss,
    targetMisrouteRate,
    strategies,
    calibrations: { confidence, confidenceByMisroute, confidenceAlone, judge },
    simulator: {
      measuredSavings: calibrated.savings,
      predictedSavings: predicted.savings,
      difference: calibrated.savings - predicted.savings,
      cheapOnlyShare,
      cheapOnlyMisroute,
      predictedWrongAnswerRate: predicted.wrongAnswerRate,
      predictedAtWorkloadEasyShare: routingCost({ easy: workload.easyShare, ratio: workload.priceRatio })
        .savings,
    },
  };
}

function costOf(prices: PriceTable, model: string, response: ModelResponse): number {
  const price = resolvePrice(prices, model);
  return price && response.usage ? costUsdOf(response.usage, price.price) : 0;
}

async function measure(
  name: string,
  model: Model,
  items: readonly WorkloadRequest[],
  clock: ReturnType<typeof fakeClock>,
  prices: PriceTable,
): Promise<RoutingStrategyResult> {
  let costUsd = 0;
  let right = 0;
  let misroutes = 0;
  let escalated = 0;
  const latencies = new Float64Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as WorkloadRequest;
    const startedAt = clock.now();
    const response = await model.generate(workloadModelRequest(item));
    latencies[i] = clock.now() - startedAt;
    costUsd += costOf(prices, response.model ?? model.name, response);
    for (const extra of response.additionalUsage ?? [])
      costUsd += costOf(prices, extra.model, { content: [], stopReason: 'end_turn', usage: extra.usage });
    if (textOf(response.content).includes(`"answer":"right:${item.id}"`)) right++;
    const record = cascadeRecordOf(response);
    const answeredByCheap = record ? record.answeredBy.tier === 0 : response.model === 'workload-cheap';
    if (record?.attempts.some((attempt) => attempt.kind === 'escalated')) escalated++;
    if (answeredByCheap && !item.cheap.right) misroutes++;
  }
  latencies.sort();
  const n = items.length;
  return {
    name,
    costUsd,
    accuracy: right / n,
    misrouteRate: misroutes / n,
    escalationRate: escalated / n,
    savings: 0,
    p50Ms: quantileOfSorted(latencies, 0.5),
    p99Ms: quantileOfSorted(latencies, 0.99),
  };
}
