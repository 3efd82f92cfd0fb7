import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { RunOptions, ToolExecutionInfo } from './options.js';
import { runAgent } from './run-agent.js';

const call = (name: string, input: unknown, id: string) => ({ name, input, id });

describe('wrapToolExecution', () => {
  it('runs each executed call inside the wrapper, with the call named, and the tool sees its scope', async () => {
    const scope = new AsyncLocalStorage<string>();
    const seenInside: (string | undefined)[] = [];
    const lookup = defineTool({
      effect: 'read',
      name: 'lookup',
      description: 'Look a key up.',
      input: z.object({ key: z.string() }),
      execute: async ({ key }) => {
        await Promise.resolve();
        seenInside.push(scope.getStore());
        return key.toUpperCase();
      },
    });
    const wrapped: ToolExecutionInfo[] = [];
    const clock = fakeClock(1_000);
    const result = await runAgent({
      model: scriptedModel([
        { toolCalls: [call('lookup', { key: 'a' }, 'c1'), call('lookup', { key: 'b' }, 'c2')] },
        { toolCalls: [call('missing_tool', {}, 'c3')] },
        { text: 'done' },
      ]),
      input: 'q',
      tools: [lookup],
      clock,
      runId: 'run_w',
      wrapToolExecution: (execute, info) => {
        wrapped.push(info);
        return scope.run(`span:${info.callId}`, execute);
      },
    });
    expect(result.outcome.kind).toBe('answered');
    // The unknown tool never ran, so it was never wrapped.
    expect(wrapped).toEqual([
      { runId: 'run_w', step: 1, callId: 'c1', tool: 'lookup', startedAt: 1_000 },
      { runId: 'run_w', step: 1, callId: 'c2', tool: 'lookup', startedAt: 1_000 },
    ]);
    expect(seenInside).toEqual(['span:c1', 'span:c2']);
  });

  it("counts a wrapper's throw as the tool's", async () => {
    const lookup = defineTool({
      effect: 'read',
      name: 'lookup',
      description: 'x',
      input: z.object({}),
      execute: () => 'never',
    });
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [call('lookup', {}, 'c1')] }, { text: 'done' }]),
      input: 'q',
      tools: [lookup],
      clock: fakeClock(),
      wrapToolExecution: () => {
        throw new Error('wrapper broke');
      },
    });
    expect(result.outcome.kind).toBe('answered');
    expect(result.messages.some((m) => JSON.stringify(m).includes('internal error'))).toBe(true);
  });

  it('rejects a wrapper that is not a function', () => {
    let option: string | undefined;
    try {
      void runAgent({
        model: scriptedModel([{ text: 'x' }]),
        input: 'q',
        wrapToolExecution: 'yes',
      } as unknown as RunOptions);
    } catch (thrown) {
      option = isConfigurationError(thrown) ? thrown.option : 'other';
    }
    expect(option).toBe('wrapToolExecution');
  });
});
