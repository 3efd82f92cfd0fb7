import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { type ScriptedTurn, scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { memoryTraceSink } from '../trace/sink.js';
import { trajectoryOf } from './trial-trajectory.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up.',
  effect: 'read',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => ({ key }),
});

const mixedScript: ScriptedTurn[] = [
  { toolCalls: [{ name: 'lookup', input: { key: 'a' } }] },
  // The same call, its keys in another order of a wider input: still a repeat.
  {
    toolCalls: [
      { name: 'lookup', input: { key: 'a' } },
      { name: 'lookup', input: { key: 'b' } },
    ],
  },
  { toolCalls: [{ name: 'nope', input: {} }] },
  { text: 'done' },
];

async function trajectoryWith(repeatLimit: number | false, script: ScriptedTurn[] = mixedScript) {
  const trace = memoryTraceSink();
  const result = await runAgent({
    model: scriptedModel(script),
    input: 'q',
    tools: [lookup],
    repeatLimit,
    trace,
  });
  return trajectoryOf(trace.events, result.outcome, result.steps);
}

describe('trajectoryOf', () => {
  it('counts the same repeats whether the loop\u2019s repeat detector was on (its events) or off (keyed here)', async () => {
    const on = await trajectoryWith(5);
    const off = await trajectoryWith(false);
    expect(on).toEqual(off);
    expect(on).toMatchObject({
      steps: 4,
      toolCalls: 4,
      repeatedCalls: 1,
      unknownToolCalls: 1,
      invalidToolCalls: 1,
      wastedSteps: 1,
      terminal: 'answered',
    });
  });

  it('counts a step whose only call repeats an earlier one as wasted, with the detector on or off', async () => {
    const script: ScriptedTurn[] = [
      { toolCalls: [{ name: 'lookup', input: { key: 'a' } }] },
      { toolCalls: [{ name: 'lookup', input: { key: 'a' } }] },
      { toolCalls: [{ name: 'lookup', input: { key: 'b' } }] },
      { text: 'done' },
    ];
    const on = await trajectoryWith(5, script);
    const off = await trajectoryWith(false, script);
    expect(on).toEqual(off);
    expect(on).toMatchObject({
      steps: 4,
      toolCalls: 3,
      repeatedCalls: 1,
      wastedSteps: 1,
      invalidToolCalls: 0,
    });
  });
});
