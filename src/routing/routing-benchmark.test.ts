import { describe, expect, it } from 'vitest';
import { routingCost } from '../sim/models/routing.js';
import { runRoutingBenchmark } from './routing-benchmark.js';
import { routingWorkload, routingWorkloadDefaults } from './routing-workload.js';

/** The measured savings and `reins model routing`'s prediction must agree within this many points. */
const simulatorTolerance = 0.01;

describe('reins bench routing', () => {
  it('the workload draws the stated shares', () => {
    const items = routingWorkload(20_000, 7);
    const share = (predicate: (item: (typeof items)[number]) => boolean) =>
      items.filter(predicate).length / items.length;
    expect(share((item) => !item.hard)).toBeCloseTo(routingWorkloadDefaults.easyShare, 2);
    const easy = items.filter((item) => !item.hard);
    expect(easy.filter((item) => item.cheap.right).length / easy.length).toBeCloseTo(0.98, 2);
    expect(routingWorkload(5, 7)).toEqual(routingWorkload(5, 7));
    expect(routingWorkload(5, 7)).not.toEqual(routingWorkload(5, 8));
  });

  it('meets the quality bars, and agrees with the routing simulator', async () => {
    const result = await runRoutingBenchmark();
    const by = (name: string) => {
      const strategy = result.strategies.find((s) => s.name === name);
      if (!strategy) throw new Error(`no strategy ${name}`);
      return strategy;
    };
    const strong = by('all-strong');
    const calibrated = by('cascade-calibrated');
    const uncalibrated = by('cascade-uncalibrated');
    expect(by('all-cheap').costUsd * 15).toBeCloseTo(strong.costUsd, 6);
    // ≥ 50 % saved at ≤ 1 point of accuracy lost; the 0.5 threshold loses more.
    expect(calibrated.savings).toBeGreaterThanOrEqual(0.5);
    expect(strong.accuracy - calibrated.accuracy).toBeLessThanOrEqual(0.01);
    expect(strong.accuracy - uncalibrated.accuracy).toBeGreaterThan(
      strong.accuracy - calibrated.accuracy + 0.01,
    );
    // The simulator's prediction at the cascade's measured cheap-only share.
    const predicted = routingCost({ easy: 1 - calibrated.escalationRate, ratio: 15 }).savings;
    expect(result.simulator.predictedSavings).toBe(predicted);
    expect(Math.abs(calibrated.savings - predicted)).toBeLessThanOrEqual(simulatorTolerance);
    // Escalation costs latency on exactly the hard requests: the cascade's p99 is above all-strong's.
    expect(calibrated.p99Ms).toBeGreaterThan(strong.p99Ms);
    expect(result.calibrations.confidence.kind).toBe('met');
  }, 60_000);
});
