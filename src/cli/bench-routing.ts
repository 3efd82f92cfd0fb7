import Table from 'cli-table3';
import pc from 'picocolors';
import { runRoutingBenchmark } from '../routing/routing-benchmark.js';
import { printJson } from './sanitize.js';

const percent = (value: number, digits = 1) => `${(value * 100).toFixed(digits)} %`;

/**
 * `reins bench routing`: a seeded synthetic workload (post-06's 15× price ratio and 70 % easy
 * traffic, the rest stated in docs/routing.md) answered by every routing strategy through
 * `cascadeModel`, thresholds fitted on a disjoint calibration set; and the calibrated cascade's
 * savings beside `reins model routing`'s prediction.
 */
export async function benchRouting(json: boolean): Promise<number> {
  const result = await runRoutingBenchmark();
  if (json) {
    printJson(result);
    return 0;
  }
  const strong = result.strategies.find((strategy) => strategy.name === 'all-strong');
  console.log(
    pc.bold(
      `\nRouting on a synthetic workload: ${result.testSize} test requests (seed ${result.seeds.test}), thresholds fitted on ${result.calibrationSize} others (seed ${result.seeds.calibration})`,
    ),
  );
  const table = new Table({
    head: [
      'strategy',
      'cost',
      'saved',
      'accuracy',
      'Δ vs strong',
      'misroute',
      'escalated',
      'p50',
      'p99',
      'threshold',
    ],
    colAligns: ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    style: { head: [] },
  });
  for (const s of result.strategies)
    table.push([
      s.name,
      `$${s.costUsd.toFixed(2)}`,
      percent(s.savings),
      percent(s.accuracy, 2),
      strong ? `${((s.accuracy - strong.accuracy) * 100).toFixed(2)} pt` : '',
      percent(s.misrouteRate, 2),
      percent(s.escalationRate),
      `${s.p50Ms.toFixed(0)} ms`,
      `${s.p99Ms.toFixed(0)} ms`,
      s.threshold === undefined ? '' : s.threshold.toFixed(3),
    ]);
  console.log(table.toString());
  const sim = result.simulator;
  console.log(
    `\n  cascade-calibrated: fitted to lose ≤ ${percent(result.targetAccuracyLoss, 0)} accuracy against all-strong (95 % upper bound); cascade-calibrated-misroute: to misroute ≤ ${percent(result.targetMisrouteRate, 0)}`,
  );
  console.log(
    `  reins model routing --easy ${sim.cheapOnlyShare.toFixed(4)} --ratio ${result.workload.priceRatio} --misroute ${sim.cheapOnlyMisroute.toFixed(4)}: predicted ${percent(sim.predictedSavings, 2)} saved; measured ${percent(sim.measuredSavings, 2)}; difference ${(sim.difference * 100).toFixed(2)} pt`,
  );
  console.log(
    pc.dim(
      `  (at the workload's own --easy ${result.workload.easyShare}, a perfect trigger: ${percent(sim.predictedAtWorkloadEasyShare, 1)}; the calibrated trigger escalates more than the hard share)`,
    ),
  );
  return 0;
}
