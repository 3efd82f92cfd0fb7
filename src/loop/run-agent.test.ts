import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError } from '../errors/reins-error.js';
import type { ModelRequest } from '../model/model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';
import type { TraceEvent } from '../trace/events.js';
import { memoryTraceSink } from '../trace/sink.js';
import type { RunOptions } from './options.js';
import { runAgent } from './run-agent.js';

const ids = (() => {
  let n = 0;
  return (prefix: string) => `${prefix}_${++n}`;
})();

function lookupTool(log: string[] = []) {
  return defineTool({
    effect: 'read',
    name: 'lookup',
    description: 'Look a key up.',
    input: z.object({ key: z.string() }),
    execute: ({ key }) => {
      log.push(key);
      return { key, value: key.toUpperCase() };
    },
  });
}

const call = (name: string, input: unknown, id?: string) => ({ name, input, ...(id ? { id } : {}) });

function base(overrides: Partial<RunOptions> & Pick<RunOptions, 'model'>): RunOptions {
  return { input: 'question', clock: fakeClock(), generateId: ids, ...overrides };
}

function ofType<T extends TraceEvent['type']>(
  events: TraceEvent[],
  type: T,
): Extract<TraceEvent, { type: T }>[] {
  return events.filter((event): event is Extract<TraceEvent, { type: T }> => event.type === type);
}

describe('runAgent outcomes', () => {
  it('answers after a tool step and reports the bill', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      { text: 'look', toolCalls: [call('lookup', { key: 'a' })] },
      { text: 'A is big.' },
    ]);
    const result = await runAgent(base({ model, tools: [lookupTool(log)] }));
    expect(result.outcome).toEqual({ kind: 'answered', text: 'A is big.' });
    expect(result.steps).toBe(2);
    expect(log).toEqual(['a']);
    const [first, second] = model.calls;
    expect(result.billedTokens).toBe(result.usage.inputTokens + result.usage.outputTokens);
    expect(second!.messages.length).toBe(first!.messages.length + 2);
    model.assertDone();
  });

  it('at the step limit asks for a final answer with tools disabled and executes nothing blind', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      { toolCalls: [call('lookup', { key: '1' })] },
      { toolCalls: [call('lookup', { key: '2' })] },
      (request: ModelRequest) => {
        expect(request.toolChoice).toBe('none');
        return { text: 'best guess', toolCalls: [call('lookup', { key: '3' })] };
      },
    ]);
    const result = await runAgent(base({ model, tools: [lookupTool(log)], maxSteps: 3 }));
    expect(result.outcome).toMatchObject({ kind: 'step_limit', limit: 3, finalText: 'best guess' });
    expect(
      result.outcome.kind === 'step_limit' && result.outcome.unexecutedCalls.map((c) => c.input),
    ).toEqual([{ key: '3' }]);
    expect(log).toEqual(['1', '2']);
    expect(model.calls[0]!.toolChoice).toBe('auto');
  });

  it("with onStepLimit 'stop' lists the calls proposed at the limit without running them", async () => {
    const log: string[] = [];
    const model = scriptedModel([
      { toolCalls: [call('lookup', { key: '1' })] },
      { text: 'more', toolCalls: [call('lookup', { key: '2' })] },
    ]);
    const result = await runAgent(
      base({ model, tools: [lookupTool(log)], maxSteps: 2, onStepLimit: 'stop' }),
    );
    expect(result.outcome).toMatchObject({
      kind: 'step_limit',
      finalText: 'more',
      unexecutedCalls: [{ tool: 'lookup', input: { key: '2' } }],
    });
    expect(log).toEqual(['1']);
  });

  it('detects a repeated (tool, args) pair and names it, but not the same tool with new args', async () => {
    const log: string[] = [];
    const same = { toolCalls: [call('lookup', { key: 'x' })] };
    const model = scriptedModel([
      { toolCalls: [call('lookup', { key: 'a' })] },
      { toolCalls: [call('lookup', { key: 'b' })] },
      same,
      same,
      same,
    ]);
    const result = await runAgent(base({ model, tools: [lookupTool(log)], maxSteps: 10, repeatLimit: 3 }));
    expect(result.outcome).toEqual({
      kind: 'looped',
      reason: 'repeated_call',
      key: 'lookup:{"key":"x"}',
      tool: 'lookup',
      input: { key: 'x' },
      count: 3,
      limit: 3,
    });
    expect(log).toEqual(['a', 'b', 'x', 'x']);
  });

  it('keys repeats on canonical JSON: key order and number spelling do not hide a loop', async () => {
    const model = scriptedModel([
      { toolCalls: [call('lookup', { key: 'k', n: 1.0, m: { b: 1, a: 2 } })] },
      { toolCalls: [call('lookup', { m: { a: 2, b: 1 }, n: 1, key: 'k' })] },
    ]);
    const tool = defineTool({
      effect: 'read',
      name: 'lookup',
      description: 'x',
      input: z.object({ key: z.string() }).passthrough(),
      execute: () => 'ok',
    });
    const result = await runAgent(base({ model, tools: [tool], repeatLimit: 2 }));
    expect(result.outcome).toMatchObject({ kind: 'looped', reason: 'repeated_call', count: 2 });
  });

  it('ends as looped/no_progress when recent actions stop being novel', async () => {
    const turns = [
      'grep discount',
      'grep "Discount"',
      '  GREP discount ',
      'grep -i discount',
      'grep discount',
    ].map((q) => ({ toolCalls: [call('lookup', { key: q })] }));
    const model = scriptedModel(turns);
    const result = await runAgent(
      base({
        model,
        tools: [lookupTool()],
        maxSteps: 10,
        repeatLimit: false,
        drift: { window: 4, minDistinct: 3 },
      }),
    );
    expect(result.outcome).toMatchObject({ kind: 'looped', reason: 'no_progress', signal: 'novelty' });
    expect(result.steps).toBe(4);
  });

  it('ends as looped/no_progress when the world state stops changing', async () => {
    const model = scriptedModel([1, 2, 3, 4].map((n) => ({ toolCalls: [call('lookup', { key: `k${n}` })] })));
    const result = await runAgent(
      base({
        model,
        tools: [lookupTool()],
        maxSteps: 10,
        drift: { window: 3, minDistinct: 1 },
        worldState: () => 'tests: 3 failing',
      }),
    );
    expect(result.outcome).toMatchObject({ kind: 'looped', reason: 'no_progress', signal: 'world_state' });
    expect(result.steps).toBe(3);
  });

  it('stops after the results that blow the context budget, before the next call', async () => {
    const huge = defineTool({
      effect: 'read',
      name: 'dump',
      description: 'x',
      input: z.object({}),
      execute: () => 'x'.repeat(40_000),
    });
    const model = scriptedModel([{ toolCalls: [call('dump', {})] }, { text: 'never' }]);
    const trace = memoryTraceSink();
    const result = await runAgent(base({ model, tools: [huge], maxContextTokens: 8_000, trace }));
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'context_tokens',
      limit: 8_000,
      phase: 'after-results',
    });
    expect(result.outcome.kind === 'over_budget' && result.outcome.actual).toBeGreaterThan(10_000);
    expect(model.calls).toHaveLength(1);
    expect(model.remaining).toBe(1);
  });

  it('refuses the first call when the prompt alone is over the context budget', async () => {
    const model = scriptedModel([{ text: 'x' }]);
    const result = await runAgent(
      base({ model, input: 'y'.repeat(4_000), maxContextTokens: 500, giveUpTool: false }),
    );
    expect(result.outcome).toEqual({
      kind: 'over_budget',
      budget: 'context_tokens',
      limit: 500,
      actual: 1_000,
      phase: 'before-call',
    });
    expect(model.calls).toHaveLength(0);
  });

  it('stops before a call that would push billed tokens over the budget', async () => {
    const turns = Array.from({ length: 10 }, (_, i) => ({
      toolCalls: [call('lookup', { key: `k${i}` })],
      usage: { inputTokens: 1_000, outputTokens: 0 },
    }));
    const model = scriptedModel(turns);
    const result = await runAgent(
      base({
        model,
        tools: [lookupTool()],
        maxSteps: 20,
        maxBilledTokens: 3_500,
        estimator: { name: 'fixed', countText: () => 0, countBlock: () => 0 },
      }),
    );
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'billed_tokens', limit: 3_500 });
    expect(result.billedTokens).toBe(3_000);
    expect(model.calls).toHaveLength(3);
  });

  it('stops before a call that would overspend, priced from the table', async () => {
    const turns = Array.from({ length: 10 }, (_, i) => ({
      toolCalls: [call('lookup', { key: `k${i}` })],
      usage: { inputTokens: 100_000, outputTokens: 10_000 },
    }));
    const model = scriptedModel(turns);
    const prices = { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } };
    const result = await runAgent(
      base({ model, tools: [lookupTool()], maxSteps: 20, maxContextTokens: 1e9, maxSpendUsd: 1, prices }),
    );
    // Each call costs $0.30 + $0.15 = $0.45: two fit under $1, a third would not.
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'spend_usd', limit: 1 });
    expect(result.costUsd).toBeCloseTo(0.9, 10);
    expect(model.calls).toHaveLength(2);
  });

  it('enforces the wall clock during a model call that never returns', async () => {
    const clock = fakeClock();
    const model = scriptedModel([() => new Promise<never>(() => {})]);
    const result = await clock.runUntilSettled(runAgent(base({ model, clock, maxWallMs: 5_000 })));
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'wall_ms',
      limit: 5_000,
      actual: 5_000,
      phase: 'during-call',
    });
    expect(clock.pendingTimers).toBe(0);
  });

  it('aborts early after too many tool errors', async () => {
    const failing = defineTool({
      effect: 'read',
      name: 'flaky',
      description: 'x',
      input: z.object({ n: z.number() }),
      execute: () => {
        throw new ToolError('Broken.', { code: 'broken' });
      },
    });
    const model = scriptedModel([1, 2, 3, 4].map((n) => ({ toolCalls: [call('flaky', { n })] })));
    const result = await runAgent(base({ model, tools: [failing], maxSteps: 10, maxToolErrors: 2 }));
    expect(result.outcome).toEqual({
      kind: 'over_budget',
      budget: 'tool_errors',
      limit: 2,
      actual: 3,
      phase: 'after-results',
    });
  });

  it('ends gave_up when the model calls the built-in cannot_complete tool', async () => {
    const model = scriptedModel([
      { toolCalls: [call('cannot_complete', { reason: 'no access to billing' })] },
    ]);
    const result = await runAgent(base({ model }));
    expect(result.outcome).toEqual({ kind: 'gave_up', reason: 'no access to billing' });
    expect(model.calls[0]!.tools.map((t) => t.name)).toContain('cannot_complete');
  });

  it('labels a truncated tool call and executes nothing', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      { text: 'partial', toolCalls: [call('lookup', { key: 'a' })], stopReason: 'max_tokens' },
    ]);
    const result = await runAgent(base({ model, tools: [lookupTool(log)] }));
    expect(result.outcome).toMatchObject({
      kind: 'truncated',
      block: 'tool_use',
      unexecutedCalls: [{ tool: 'lookup' }],
    });
    expect(log).toEqual([]);
  });

  it('labels a refusal, an empty response, a model that throws, and a malformed response', async () => {
    const refusal = await runAgent(
      base({ model: scriptedModel([{ text: 'I cannot help with that.', stopReason: 'refusal' }]) }),
    );
    expect(refusal.outcome).toEqual({ kind: 'refused', text: 'I cannot help with that.' });
    const empty = await runAgent(base({ model: scriptedModel([{}]) }));
    expect(empty.outcome).toMatchObject({ kind: 'hard_error', source: 'empty_response' });
    const throwing = await runAgent(
      base({ model: scriptedModel([{ throws: Object.assign(new Error('overloaded'), { status: 529 }) }]) }),
    );
    expect(throwing.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'model',
      error: { message: 'overloaded', code: '529' },
    });
    const malformed = await runAgent(
      base({ model: { name: 'bad', generate: async () => ({ content: 'nope' }) as never } }),
    );
    expect(malformed.outcome).toMatchObject({ kind: 'hard_error', source: 'malformed_response' });
  });

  it('estimates usage when the provider reports none', async () => {
    const model = {
      name: 'no-usage',
      generate: async () =>
        ({
          content: [{ type: 'text' as const, text: 'hi there' }],
          stopReason: 'end_turn' as const,
        }) as never,
    };
    const trace = memoryTraceSink();
    const result = await runAgent(base({ model, trace }));
    expect(result.outcome.kind).toBe('answered');
    expect(result.billedTokens).toBeGreaterThan(0);
    expect(ofType(trace.events, 'model-response')[0]!.usageEstimated).toBe(true);
  });
});

describe('runAgent tool dispatch', () => {
  it('answers an unknown tool, bad JSON and invalid fields with labeled errors, executing nothing', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          call('nope', {}),
          { name: 'lookup', inputText: '{"key": "a' },
          call('lookup', { key: 42 }),
        ],
      },
      { text: 'done' },
    ]);
    const trace = memoryTraceSink();
    const result = await runAgent(base({ model, tools: [lookupTool(log)], trace }));
    expect(result.outcome.kind).toBe('answered');
    expect(log).toEqual([]);
    const results = ofType(trace.events, 'tool-result');
    expect(results.map((r) => r.status)).toEqual(['unknown_tool', 'invalid_json', 'invalid_input']);
    expect(results[0]!.content).toContain('Available tools: lookup');
    expect(results[2]!.content).toContain('key: Invalid input: expected string, received number');
    expect(result.toolErrors).toBe(3);
  });

  it('shows the model a ToolError message but only a generic line for an unknown throw', async () => {
    const secret = defineTool({
      effect: 'read',
      name: 'secret',
      description: 'x',
      input: z.object({}),
      execute: () => {
        throw new Error('db password=hunter2 rejected');
      },
    });
    const polite = defineTool({
      effect: 'read',
      name: 'polite',
      description: 'x',
      input: z.object({}),
      execute: () => {
        throw new ToolError('Order not found; use search_orders.', {
          code: 'not_found',
          details: { sql: 'SELECT' },
        });
      },
    });
    const model = scriptedModel([{ toolCalls: [call('secret', {}), call('polite', {})] }, { text: 'ok' }]);
    const trace = memoryTraceSink();
    await runAgent(base({ model, tools: [secret, polite], trace }));
    const [hidden, shown] = ofType(trace.events, 'tool-result');
    expect(hidden!.content).not.toContain('hunter2');
    expect(JSON.parse(hidden!.content).error.code).toBe('internal_error');
    expect(hidden!.error!.message).toContain('hunter2');
    expect(JSON.parse(shown!.content).error).toEqual({
      code: 'not_found',
      message: 'Order not found; use search_orders.',
      retry: 'no',
    });
    expect(JSON.stringify(model.calls[1]!.messages)).not.toContain('hunter2');
  });

  it('times out a tool that never resolves, aborting its signal', async () => {
    const clock = fakeClock();
    let aborted = false;
    const hang = defineTool({
      effect: 'read',
      name: 'hang',
      description: 'x',
      input: z.object({}),
      timeoutMs: 2_000,
      execute: (_input, { signal }) =>
        new Promise(() =>
          signal.addEventListener('abort', () => {
            aborted = true;
          }),
        ),
    });
    const model = scriptedModel([{ toolCalls: [call('hang', {})] }, { text: 'gave it up' }]);
    const trace = memoryTraceSink();
    const result = await clock.runUntilSettled(runAgent(base({ model, clock, tools: [hang], trace })));
    expect(result.outcome.kind).toBe('answered');
    expect(aborted).toBe(true);
    const [timeout] = ofType(trace.events, 'tool-result');
    expect(timeout).toMatchObject({ status: 'timeout', durationMs: 2_000 });
  });

  it('runs one step\u2019s calls concurrently up to toolConcurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const slow = defineTool({
      effect: 'read',
      trustedOutput: true,
      name: 'slow',
      description: 'x',
      input: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        return n;
      },
    });
    const model = scriptedModel([
      { toolCalls: [1, 2, 3, 4, 5, 6, 7].map((n) => call('slow', { n })) },
      { text: 'done' },
    ]);
    const result = await runAgent(base({ model, tools: [slow], toolConcurrency: 3 }));
    expect(result.outcome.kind).toBe('answered');
    expect(peak).toBe(3);
    const results = model.calls[1]!.messages.at(-1)!.content.map((b) =>
      b.type === 'tool_result' ? b.content : '',
    );
    expect(results).toEqual(['1', '2', '3', '4', '5', '6', '7']);
  });

  it('a fatal tool error aborts its siblings and ends hard_error', async () => {
    let siblingAborted = false;
    const fatal = defineTool({
      effect: 'read',
      name: 'fatal',
      description: 'x',
      input: z.object({}),
      execute: async () => {
        await Promise.resolve();
        throw new ToolError('Credentials revoked.', { fatal: true });
      },
    });
    const sibling = defineTool({
      effect: 'read',
      name: 'sibling',
      description: 'x',
      input: z.object({}),
      execute: (_i, { signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            siblingAborted = true;
            reject(new Error('aborted'));
          }),
        ),
    });
    const model = scriptedModel([{ toolCalls: [call('sibling', {}), call('fatal', {})] }]);
    const result = await runAgent(base({ model, tools: [fatal, sibling] }));
    expect(result.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'tool',
      error: { message: 'Credentials revoked.' },
    });
    expect(siblingAborted).toBe(true);
  });

  it('cancels on the caller\u2019s signal mid-tool and leaves no listener on it', async () => {
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    }) as typeof remove;
    const wait = defineTool({
      effect: 'read',
      name: 'wait',
      description: 'x',
      input: z.object({}),
      execute: (_i, { signal: s }) =>
        new Promise((resolve) => {
          controller.abort('user pressed stop');
          s.addEventListener('abort', () => resolve('late'));
        }),
    });
    const model = scriptedModel([{ toolCalls: [call('wait', {})] }, { text: 'never' }]);
    const result = await runAgent(base({ model, tools: [wait], signal }));
    expect(result.outcome).toEqual({ kind: 'cancelled', reason: 'user pressed stop' });
    expect(added).toBeGreaterThan(0);
    expect(removed).toBe(added);
  });
});

describe('runAgent authorization', () => {
  const getOrder = (executed: string[]) =>
    defineTool({
      effect: 'read',
      name: 'get_order',
      description: 'x',
      input: z.object({ orderId: z.string() }),
      scopes: ['orders:read'],
      execute: ({ orderId }) => {
        executed.push(orderId);
        return { orderId, owner: orderId === 'o-1' ? 'alice' : 'bob', total: 42 };
      },
    });
  const owns = ({ input, actor }: { input: unknown; actor: { id: string } | undefined }) =>
    (input as { orderId: string }).orderId === 'o-1' && actor?.id === 'alice'
      ? ({ allow: true } as const)
      : ({ allow: false, reason: 'the order belongs to another customer' } as const);

  it('denies a call for another customer\u2019s data: recorded, not executed, nothing of it in context', async () => {
    const executed: string[] = [];
    const model = scriptedModel([{ toolCalls: [call('get_order', { orderId: 'o-2' })] }, { text: 'cannot' }]);
    const trace = memoryTraceSink();
    const result = await runAgent(
      base({
        model,
        tools: [getOrder(executed)],
        actor: { id: 'alice', scopes: ['orders:read'] },
        authorize: owns,
        trace,
      }),
    );
    expect(executed).toEqual([]);
    expect(ofType(trace.events, 'authorization')).toMatchObject([
      { allowed: false, actorId: 'alice', reason: 'the order belongs to another customer' },
    ]);
    expect(ofType(trace.events, 'tool-result')[0]).toMatchObject({ status: 'denied', isError: true });
    expect(JSON.stringify(model.calls[1]!.messages)).not.toContain('bob');
    expect(result.outcome.kind).toBe('answered');
  });

  it('the default authorizer needs the tool\u2019s scopes on the actor, and an actor at all', async () => {
    for (const actor of [undefined, { id: 'eve', scopes: ['profile:read'] }]) {
      const executed: string[] = [];
      const model = scriptedModel([{ toolCalls: [call('get_order', { orderId: 'o-1' })] }, { text: 'x' }]);
      await runAgent(base({ model, tools: [getOrder(executed)], ...(actor ? { actor } : {}) }));
      expect(executed).toEqual([]);
    }
    const executed: string[] = [];
    const model = scriptedModel([{ toolCalls: [call('get_order', { orderId: 'o-1' })] }, { text: 'x' }]);
    await runAgent(
      base({ model, tools: [getOrder(executed)], actor: { id: 'alice', scopes: ['orders:read'] } }),
    );
    expect(executed).toEqual(['o-1']);
  });

  it('fails closed when the authorizer throws or answers nonsense', async () => {
    for (const authorize of [
      () => {
        throw new Error('policy service down');
      },
      () => ({ allow: 'yes' }) as never,
      () => undefined as never,
    ]) {
      const executed: string[] = [];
      const model = scriptedModel([{ toolCalls: [call('get_order', { orderId: 'o-1' })] }, { text: 'x' }]);
      await runAgent(
        base({
          model,
          tools: [getOrder(executed)],
          actor: { id: 'alice', scopes: ['orders:read'] },
          authorize,
        }),
      );
      expect(executed).toEqual([]);
    }
  });
});

describe('runAgent options', () => {
  const model = scriptedModel([]);
  it.each([
    ['maxSteps', { maxSteps: -1 }],
    ['maxSteps', { maxSteps: 0 }],
    ['maxSteps', { maxSteps: 2.5 }],
    ['maxContextTokens', { maxContextTokens: Number.NaN }],
    ['maxBilledTokens', { maxBilledTokens: -10 }],
    ['repeatLimit', { repeatLimit: 1 }],
    ['maxWallMs', { maxWallMs: 0 }],
    ['toolTimeoutMs', { toolTimeoutMs: Number.NaN }],
    ['maxSpendUsd', { maxSpendUsd: 5 }],
    ['drift.minDistinct', { drift: { window: 3, minDistinct: 5 } }],
    ['onStepLimit', { onStepLimit: 'explode' as never }],
  ])('throws a ConfigurationError naming %s', (option, bad) => {
    let thrown: unknown;
    try {
      void runAgent({ model, input: 'x', ...bad });
    } catch (error) {
      thrown = error;
    }
    expect(isConfigurationError(thrown)).toBe(true);
    expect((thrown as { option: string }).option).toBe(option);
  });

  it('throws for a missing model and duplicate tool names', () => {
    expect(() => runAgent({ input: 'x' } as never)).toThrow(/model/);
    expect(() => runAgent({ model, input: 'x', tools: [lookupTool(), lookupTool()] })).toThrow(
      /two tools are named "lookup"/,
    );
  });
});
