import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { type ScriptedTurn, scriptedModel } from '../testing/scripted-model.js';
import { seededRandom } from '../testing/seeded-random.js';
import { defineTool } from '../tools/define-tool.js';
import { memoryTraceSink } from '../trace/sink.js';
import { workflowTell } from './workflow-tell.js';

const tool = (name: string) =>
  defineTool({ effect: 'read', name, description: name, input: z.object({}), execute: () => 'ok' });
const tools = [tool('fetch'), tool('summarize'), tool('search')];
const call = (name: string): ScriptedTurn => ({ toolCalls: [{ name, input: {} }] });

describe('workflowTell', () => {
  it('flags an agent that always takes the same path, and not one that decides', async () => {
    const trace = memoryTraceSink();
    const random = seededRandom(15);
    for (let run = 0; run < 8; run++) {
      // Nightly summary: fetch, summarize, answer, every night.
      const straight = scriptedModel([call('fetch'), call('summarize'), { text: 'done' }]);
      await runAgent({ model: straight, system: 'Summarize the nightly report.', tools, input: 'go', trace });
      // A researcher: a random number of searches and fetches, in a random order.
      const turns: ScriptedTurn[] = [];
      const steps = 1 + Math.floor(random() * 4);
      for (let i = 0; i < steps; i++) turns.push(call(random() < 0.5 ? 'search' : 'fetch'));
      turns.push({ text: 'found' });
      await runAgent({
        model: scriptedModel(turns),
        system: 'Research the question.',
        tools,
        input: 'q',
        trace,
      });
    }
    const tells = workflowTell(trace.events);
    const nightly = tells.find((tell) => tell.label === 'Summarize the nightly report.');
    const research = tells.find((tell) => tell.label === 'Research the question.');
    expect(nightly).toMatchObject({
      runs: 8,
      decisions: 24,
      predictability: 1,
      straightLine: true,
      typicalPath: ['fetch', 'summarize', '(answer)'],
    });
    expect(research?.runs).toBe(8);
    expect(research?.predictability).toBeLessThan(0.95);
    expect(research?.straightLine).toBe(false);
  });

  it('does not flag too few decisions, and honours the threshold', async () => {
    const trace = memoryTraceSink();
    await runAgent({
      model: scriptedModel([call('fetch'), { text: 'x' }]),
      system: 's',
      tools,
      input: 'go',
      trace,
    });
    expect(workflowTell(trace.events)[0]).toMatchObject({
      decisions: 2,
      predictability: 1,
      straightLine: false,
    });
    expect(workflowTell(trace.events, { minDecisions: 2 })[0]?.straightLine).toBe(true);
    expect(workflowTell(trace.events, { minDecisions: 2, threshold: 1.01 })[0]?.straightLine).toBe(false);
  });
});
