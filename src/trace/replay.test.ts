import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { runScenario } from '../scenarios/run-scenario.js';
import { scenarioNames } from '../scenarios/scenarios.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';
import { replayTrace } from './replay.js';
import { memoryTraceSink } from './sink.js';

const fixed = () => ({ clock: fakeClock(), generateId: (prefix: string) => `${prefix}_1` });

describe('replayTrace reproduces the outcome from the trace alone', () => {
  for (const name of scenarioNames) {
    for (const repeatLimit of [3, false] as const) {
      it(`${name} (repeat detection ${repeatLimit === false ? 'off' : 'on'})`, async () => {
        const run = await runScenario(name, { ...fixed(), repeatLimit });
        const replay = await replayTrace(JSON.parse(JSON.stringify(run.trace)));
        expect(replay.matches).toBe(true);
        expect(replay.outcome).toEqual(run.outcome);
        expect(replay.result.billedTokens).toBe(run.billedTokens);
        expect(replay.result.steps).toBe(run.steps);
      });
    }
  }

  it('a model error, a denial, a tool timeout and a wall-clock stop', async () => {
    const clock = fakeClock();
    const hang = defineTool({
      effect: 'read',
      name: 'hang',
      description: 'x',
      input: z.object({}),
      timeoutMs: 1_000,
      execute: () => new Promise(() => {}),
    });
    const guarded = defineTool({
      effect: 'read',
      name: 'guarded',
      description: 'x',
      input: z.object({}),
      scopes: ['admin'],
      execute: () => 'secret',
    });
    const flaky = defineTool({
      effect: 'read',
      name: 'flaky',
      description: 'x',
      input: z.object({}),
      execute: () => {
        throw new ToolError('nope');
      },
    });
    const cases = [
      { model: scriptedModel([{ throws: new Error('503 from upstream') }]) },
      {
        model: scriptedModel([
          {
            toolCalls: [
              { name: 'guarded', input: {} },
              { name: 'flaky', input: {} },
            ],
          },
          { text: 'ok' },
        ]),
      },
      { model: scriptedModel([{ toolCalls: [{ name: 'hang', input: {} }] }, { text: 'ok' }]) },
      {
        model: scriptedModel([
          { toolCalls: [{ name: 'hang', input: {} }] },
          () => new Promise<never>(() => {}),
        ]),
        maxWallMs: 3_000,
      },
    ];
    for (const extra of cases) {
      const trace = memoryTraceSink();
      const run = await clock.runUntilSettled(
        runAgent({ input: 'q', tools: [hang, guarded, flaky], trace, clock, ...extra }),
      );
      const replay = await replayTrace(trace.events);
      expect(replay.outcome).toEqual(run.outcome);
      expect(replay.matches).toBe(true);
    }
  });

  it('says so when the trace does not reproduce', async () => {
    const run = await runScenario('happy', fixed());
    const tampered = run.trace.filter((event) => !(event.type === 'model-response' && event.step === 4));
    const replay = await replayTrace(tampered);
    expect(replay.matches).toBe(false);
    expect(replay.outcome).toMatchObject({ kind: 'hard_error', source: 'model' });
    expect(replay.divergences).toEqual(['no recorded model response for call 4']);
  });
});

describe('a model switched by prepareStep replays under its recorded name', () => {
  it('a run that switched to a pricier model and stopped over budget replays to the same outcome', async () => {
    const usage = { inputTokens: 1_000, outputTokens: 1_000, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const named = (name: string, id: string) => ({
      name,
      generate: async () => ({
        content: [{ type: 'tool_use' as const, id, name: 'lookup', input: { q: id } }],
        stopReason: 'tool_use' as const,
        usage,
      }),
    });
    const lookup = defineTool({
      name: 'lookup',
      description: 'x',
      effect: 'read',
      input: z.object({ q: z.string() }),
      execute: () => 'ok',
    });
    const sink = memoryTraceSink();
    const pricey = named('pricey', 't2');
    const result = await runAgent({
      model: named('cheap', 't1'),
      input: 'go',
      tools: [lookup],
      prices: {
        cheap: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1 },
        pricey: { inputUsdPerMillionTokens: 1_000, outputUsdPerMillionTokens: 1_000 },
      },
      maxSpendUsd: 1,
      prepareStep: ({ step }) =>
        step === 2 ? { model: pricey, settings: { stopSequences: ['END'] } } : undefined,
      trace: sink,
    });
    expect(result.outcome.kind).toBe('over_budget');
    const replay = await replayTrace(sink.events);
    expect(replay.outcome).toEqual(result.outcome);
    expect(replay.matches).toBe(true);
  });
});
