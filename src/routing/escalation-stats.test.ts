import { describe, expect, it } from 'vitest';
import { runAgent } from '../loop/run-agent.js';
import { consecutiveFailures } from '../resilience/breaker-strategy.js';
import { CircuitBreaker } from '../resilience/circuit-breaker.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { memoryTraceSink } from '../trace/sink.js';
import { cascadeModel } from './cascade-model.js';
import { escalationStats } from './escalation-stats.js';
import { structuralTrigger } from './structural-trigger.js';

describe('escalationStats', () => {
  it('counts escalations by trigger, answers by tier and skipped tiers from a trace', async () => {
    const trace = memoryTraceSink();
    const cheap = scriptedModel(
      [{ text: 'a fine long answer' }, { text: '' }, { text: 'another long answer' }],
      { name: 'cheap' },
    );
    const strong = scriptedModel([{ text: 'strong answer' }], { name: 'strong' });
    const model = cascadeModel({ tiers: [cheap, strong], escalate: structuralTrigger({ minChars: 5 }) });
    for (let i = 0; i < 2; i++) await runAgent({ model, input: 'q', trace });
    const open = new CircuitBreaker({ strategy: consecutiveFailures(1) });
    open.record(open.acquire(), false);
    const skipping = cascadeModel({
      tiers: [{ model: scriptedModel([]), breaker: open }, cheap],
      escalate: structuralTrigger(),
    });
    await runAgent({ model: skipping, input: 'q', trace });
    const stats = escalationStats(trace.events);
    expect(stats).toMatchObject({
      requests: 3,
      escalated: 1,
      byTrigger: { structural: 1 },
      answeredBy: { cheap: 2, strong: 1 },
      skipped: 1,
      degraded: 0,
    });
    expect(stats.escalationRate?.estimate).toBeCloseTo(1 / 3, 12);
  });
});
