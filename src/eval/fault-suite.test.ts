import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { seededRandom } from '../testing/seeded-random.js';
import { defineTool } from '../tools/define-tool.js';
import type { EvalSuite, TrialContext } from './eval-types.js';
import { faultSuite } from './fault-suite.js';

function tool(name: string) {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    input: z.object({}),
    effect: 'read',
    trustedOutput: true,
    execute: () => ({ from: name }),
  });
}

const lookup = tool('lookup');
const other = tool('other');
const draws: number[] = [];

const suite: EvalSuite = {
  name: 'orders',
  cases: [{ id: 'c1', input: 'go', expect: () => true }],
  agent: (context) => {
    draws.push(context.random());
    return {
      model: scriptedModel([
        { toolCalls: [{ name: 'lookup', input: {} }] },
        { toolCalls: [{ name: 'lookup', input: {}, id: 'second' }] },
        { text: 'done' },
      ]),
      tools: [lookup, other],
      maxSteps: 5,
    };
  },
};

const caseOne = suite.cases[0] as NonNullable<(typeof suite.cases)[number]>;
const contextOf = (trial: number, seed: number): TrialContext & { case: typeof caseOne } => ({
  caseId: 'c1',
  trial,
  seed,
  random: seededRandom(seed),
  world: undefined,
  case: caseOne,
});

async function runTrial(cell: EvalSuite, trial: number, seed: number) {
  const config = await cell.agent(contextOf(trial, seed));
  const result = await runAgent({ ...config, input: 'go' });
  return { config, result };
}

describe('faultSuite', () => {
  it('wraps only the named tool and leaves the rest, cases and the trial’s random untouched', async () => {
    const cell = faultSuite(suite, { tool: 'lookup', fault: 'http_500', atCall: 1 });
    expect(cell.cases).toBe(suite.cases);
    expect(cell.name).toBe('orders [lookup: http_500]');
    draws.length = 0;
    const { config, result } = await runTrial(cell, 0, 11);
    await suite.agent(contextOf(0, 11));
    expect(draws[0]).toBe(draws[1]);
    expect(config.tools?.[1]).toBe(other);
    expect(config.tools?.[0]).not.toBe(lookup);
    expect(config.tools?.[0]?.name).toBe('lookup');
    expect(result.outcome.kind).toBe('answered');
    expect(cell.faults.trial('c1', 0)).toEqual({ calls: 2, injected: 1 });
    expect(cell.faults.injected).toBe(1);
    expect([...cell.faults.faultedTrials]).toEqual(['c1#0']);
  });

  it('counts per trial, and reports trials where a rated fault never fired', async () => {
    const cell = faultSuite(suite, { tool: 'lookup', fault: 'empty', rate: 0 });
    await runTrial(cell, 0, 1);
    await runTrial(cell, 1, 2);
    expect(cell.faults.trial('c1', 1)).toEqual({ calls: 2, injected: 0 });
    expect(cell.faults.injected).toBe(0);
    expect(cell.faults.faultedTrials.size).toBe(0);
    expect(cell.faults.trial('c1', 7)).toBeUndefined();
  });

  it('seeds each trial from its seed: the same seed fires the same calls', async () => {
    const pattern = async (seed: number) => {
      const cell = faultSuite(suite, { tool: 'lookup', fault: 'empty', rate: 0.5 });
      const fired: number[] = [];
      for (let trial = 0; trial < 12; trial++) {
        await runTrial(cell, trial, seed + trial);
        fired.push(cell.faults.trial('c1', trial)?.injected ?? -1);
      }
      return fired;
    };
    const first = await pattern(100);
    expect(await pattern(100)).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it('names the tools the agent has when asked for one it lacks', async () => {
    const cell = faultSuite(suite, { tool: 'missing', fault: 'timeout' });
    await expect(cell.agent(contextOf(0, 1))).rejects.toThrow(
      /offers no tool "missing" \(it has lookup, other\)/,
    );
  });
});
