import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { isReinsError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { resumeAgent, runAgent } from './run-agent.js';
import type { RunState } from './run-state.js';

function recorder(executed: number[]) {
  return defineTool({
    effect: 'read',
    name: 'record',
    description: 'x',
    input: z.object({ step: z.number() }),
    execute: ({ step }) => {
      executed.push(step);
      return `ok ${step}`;
    },
  });
}
const turn = (step: number) => ({ text: `step ${step}`, toolCalls: [{ name: 'record', input: { step } }] });

describe('resume, do not restart', () => {
  it('continues a run that failed mid-way from its last completed step; no completed call runs again', async () => {
    const executed: number[] = [];
    const store = new MemoryCheckpointStore();
    const clock = fakeClock();
    const first = await runAgent({
      model: scriptedModel([turn(1), turn(2), turn(3), { throws: new Error('connection reset') }]),
      input: 'go',
      tools: [recorder(executed)],
      checkpoint: store,
      runId: 'run-a',
      maxSteps: 10,
      clock,
    });
    expect(first.outcome).toMatchObject({ kind: 'hard_error', source: 'model' });
    const saved = store.load('run-a') as RunState;
    expect(saved).toMatchObject({ status: 'ended', step: 3 });

    const second = await resumeAgent(saved, {
      model: scriptedModel([turn(4), turn(5), { text: 'finished' }]),
      tools: [recorder(executed)],
      checkpoint: store,
      maxSteps: 10,
      clock,
    });
    expect(second.outcome).toEqual({ kind: 'answered', text: 'finished' });
    expect(executed).toEqual([1, 2, 3, 4, 5]);
    expect(second.steps).toBe(6);
    // The budgets carry across: the bill includes the first attempt's calls.
    expect(second.billedTokens).toBeGreaterThan(first.billedTokens);
    expect(store.load('run-a')).toMatchObject({ status: 'ended', step: 6 });
  });

  it('the step limit and repeat counts carry across a resume', async () => {
    const executed: number[] = [];
    const store = new MemoryCheckpointStore();
    await runAgent({
      model: scriptedModel([turn(1), turn(1), { throws: new Error('boom') }]),
      input: 'go',
      tools: [recorder(executed)],
      checkpoint: store,
      runId: 'r',
      repeatLimit: 3,
      maxSteps: 5,
    });
    const resumed = await resumeAgent(store.load('r') as RunState, {
      model: scriptedModel([turn(1)]),
      tools: [recorder(executed)],
      repeatLimit: 3,
      maxSteps: 5,
    });
    expect(resumed.outcome).toMatchObject({ kind: 'looped', count: 3 });
    expect(executed).toEqual([1, 1]);
  });

  it('an answered run resumes to the same outcome without calling the model', async () => {
    const store = new MemoryCheckpointStore();
    await runAgent({
      model: scriptedModel([{ text: 'done' }]),
      input: 'go',
      checkpoint: store,
      runId: 'done-run',
    });
    const model = scriptedModel([]);
    const again = await resumeAgent(store.load('done-run') as RunState, { model });
    expect(again.outcome).toEqual({ kind: 'answered', text: 'done' });
    expect(model.calls).toHaveLength(0);
  });

  it('rejects a corrupt or future-version state with a labeled error', () => {
    const model = scriptedModel([]);
    for (const bad of [{}, { version: 2 }, { version: 1, runId: 'x', step: 'two' }]) {
      let thrown: unknown;
      try {
        void resumeAgent(bad as never, { model });
      } catch (error) {
        thrown = error;
      }
      expect(isReinsError(thrown)).toBe(true);
    }
  });

  it('a failing checkpoint store ends the run hard_error/checkpoint instead of running on unprotected', async () => {
    const executed: number[] = [];
    const store = {
      save: () => {
        throw new Error('disk full');
      },
      load: () => undefined,
    };
    const result = await runAgent({
      model: scriptedModel([turn(1), turn(2)]),
      input: 'go',
      tools: [recorder(executed)],
      checkpoint: store,
    });
    expect(result.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'checkpoint',
      error: { message: 'disk full' },
    });
    expect(executed).toEqual([1]);
  });
});
