import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { seededRandom } from '../testing/seeded-random.js';
import { defineTool, type ToolContext } from '../tools/define-tool.js';
import { memoryTraceSink } from '../trace/sink.js';
import { type FaultFiring, type ToolFault, toolFaults, withFault } from './fault-injection.js';

const order = { orderId: 'A-17', status: 'shipped', items: 3, gift: false };

function getOrder(options: { output?: boolean } = {}) {
  let executions = 0;
  const tool = defineTool({
    name: 'get_order',
    description: 'Look up one order by id.',
    input: z.object({ orderId: z.string() }),
    effect: 'read',
    // Trusted, so results reach the model unwrapped and the tests read them as the tool gave them.
    trustedOutput: true,
    ...(options.output
      ? {
          output: z.object({ orderId: z.string(), status: z.string(), items: z.number(), gift: z.boolean() }),
        }
      : {}),
    execute: () => {
      executions++;
      return { ...order };
    },
  });
  return { tool, executions: () => executions };
}

const call = { name: 'get_order', input: { orderId: 'A-17' } };

/** Runs one call to the tool (twice when `again`), then an answer; returns what the model saw. */
async function runWith(
  fault: ToolFault,
  firing: FaultFiring = {},
  { again = false, output = false }: { again?: boolean; output?: boolean } = {},
) {
  const clock = fakeClock();
  const base = getOrder({ output });
  const faulty = withFault(base.tool, { fault, random: seededRandom(1), clock, ...firing });
  const script = [
    { text: 'Looking it up.', toolCalls: [call] },
    ...(again ? [{ text: 'Trying again.', toolCalls: [{ ...call, id: 'again' }] }] : []),
    { text: 'Done.' },
  ];
  const model = scriptedModel(script);
  const trace = memoryTraceSink();
  const result = await clock.runUntilSettled(
    runAgent({ model, input: 'Where is A-17?', tools: [faulty], trace, clock, toolTimeoutMs: 20_000 }),
  );
  const results = trace.events.flatMap((event) => (event.type === 'tool-result' ? [event] : []));
  return { result, results, faulty, model, executions: base.executions, clock };
}

describe('withFault through the real loop', () => {
  it('http_429: a labeled rate-limit error with the retry-after shown to the model, then the real answer', async () => {
    const { result, results, faulty, executions } = await runWith(
      'http_429',
      { retryAfterSeconds: 12 },
      { again: true },
    );
    expect(result.outcome.kind).toBe('answered');
    expect(results.map((r) => r.status)).toEqual(['error', 'ok']);
    expect(JSON.parse(results[0]?.content ?? '')).toEqual({
      error: {
        code: 'rate_limited',
        message: 'get_order: rate limited (HTTP 429); try again in 12 s.',
        retry: 'after',
        retryAfterSeconds: 12,
      },
    });
    expect(JSON.parse(results[1]?.content ?? '')).toEqual(order);
    expect(faulty.faultCount).toEqual({ calls: 2, injected: 1 });
    expect(executions()).toBe(1);
  });

  it('http_429 defaults to 30 s', async () => {
    const { results } = await runWith('http_429');
    expect(JSON.parse(results[0]?.content ?? '').error.retryAfterSeconds).toBe(30);
  });

  it('http_500: a retryable error labeled http_500', async () => {
    const { results, executions } = await runWith('http_500');
    expect(results[0]?.status).toBe('error');
    expect(JSON.parse(results[0]?.content ?? '').error).toMatchObject({ code: 'http_500', retry: 'yes' });
    expect(executions()).toBe(0);
  });

  it('timeout: never settles on its own, so the loop’s toolTimeoutMs ends it as a timeout', async () => {
    const { result, results, clock } = await runWith('timeout');
    expect(result.outcome.kind).toBe('answered');
    expect(results[0]?.status).toBe('timeout');
    expect(results[0]?.durationMs).toBe(20_000);
    expect(JSON.parse(results[0]?.content ?? '').error.code).toBe('timeout');
    expect(clock.pendingTimers).toBe(0);
  });

  it('malformed_json: the model is shown invalid JSON text, and the tool never ran', async () => {
    const { results, executions } = await runWith('malformed_json');
    expect(results[0]?.status).toBe('ok');
    expect(() => JSON.parse(results[0]?.content ?? '')).toThrow();
    expect(executions()).toBe(0);
  });

  it('empty: the model is shown null', async () => {
    const { results } = await runWith('empty');
    expect(results[0]?.content).toBe('null');
  });

  it('truncated: the first half of the real result’s JSON, with no marker', async () => {
    const { results, executions } = await runWith('truncated');
    const text = JSON.stringify(order);
    expect(results[0]?.content).toBe(text.slice(0, Math.floor(text.length / 2)));
    expect(results[0]?.truncation).toBeUndefined();
    expect(executions()).toBe(1);
  });

  it('schema_invalid: fields renamed and retyped; a tool with an output schema keeps it from the model', async () => {
    const loose = await runWith('schema_invalid');
    expect(JSON.parse(loose.results[0]?.content ?? '')).toEqual({
      orderId_v2: 4,
      status_v2: 7,
      items_v2: '3',
      gift_v2: 'no',
    });
    const checked = await runWith('schema_invalid', {}, { output: true });
    expect(checked.results[0]?.status).toBe('validation_error');
    expect(checked.results[0]?.content).not.toContain('orderId_v2');
  });

  it('slow: answers after delayMs on the injected clock, or times out when that is longer than the limit', async () => {
    const quick = await runWith('slow', { delayMs: 5_000 });
    expect(quick.results[0]?.status).toBe('ok');
    expect(quick.results[0]?.durationMs).toBe(5_000);
    expect(JSON.parse(quick.results[0]?.content ?? '')).toEqual(order);
    const late = await runWith('slow', { delayMs: 60_000 });
    expect(late.results[0]?.status).toBe('timeout');
    expect(late.executions()).toBe(0);
    expect(late.clock.pendingTimers).toBe(0);
  });
});

describe('withFault firing', () => {
  const context = { signal: new AbortController().signal } as ToolContext;
  const callTimes = async (tool: ReturnType<typeof withFault>, n: number) => {
    for (let i = 0; i < n; i++)
      await Promise.resolve(tool.execute({ orderId: 'x' }, context)).catch(() => {});
  };

  it('keeps the name, schema, effect and checks', () => {
    const { tool } = getOrder({ output: true });
    const faulty = withFault(tool, { fault: 'empty', random: seededRandom(1) });
    expect(faulty.name).toBe(tool.name);
    expect(faulty.inputJsonSchema).toBe(tool.inputJsonSchema);
    expect(faulty.effect).toBe(tool.effect);
    expect(faulty.checkOutput).toBe(tool.checkOutput);
  });

  it('rate 0 never fires; rate 1 always does', async () => {
    const never = withFault(getOrder().tool, { fault: 'http_500', rate: 0, random: seededRandom(3) });
    const always = withFault(getOrder().tool, { fault: 'http_500', rate: 1, random: seededRandom(3) });
    await callTimes(never, 50);
    await callTimes(always, 50);
    expect(never.faultCount).toEqual({ calls: 50, injected: 0 });
    expect(always.faultCount).toEqual({ calls: 50, injected: 50 });
  });

  it('atCall fires exactly once, on that call', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 12 }), async (at, calls) => {
        const base = getOrder();
        const faulty = withFault(base.tool, { fault: 'http_500', atCall: at, random: seededRandom(1) });
        await callTimes(faulty, calls);
        expect(faulty.faultCount.injected).toBe(calls >= at ? 1 : 0);
        expect(base.executions()).toBe(calls - (calls >= at ? 1 : 0));
      }),
    );
  });

  it('a seeded rate replays exactly and fires about as often as asked', async () => {
    const fired = async (seed: number) => {
      const faulty = withFault(getOrder().tool, { fault: 'empty', rate: 0.3, random: seededRandom(seed) });
      const pattern: boolean[] = [];
      for (let i = 0; i < 400; i++) pattern.push((await faulty.execute({ orderId: 'x' }, context)) === null);
      return pattern;
    };
    const first = await fired(9);
    expect(await fired(9)).toEqual(first);
    const share = first.filter(Boolean).length / first.length;
    expect(share).toBeGreaterThan(0.22);
    expect(share).toBeLessThan(0.38);
  });

  it('refuses bad options before any run', () => {
    const { tool } = getOrder();
    const random = seededRandom(1);
    expect(() => withFault(tool, { fault: 'nope' as ToolFault, random })).toThrow(/fault/);
    expect(() => withFault(tool, { fault: 'empty', rate: 0.5, atCall: 2, random })).toThrow(/not both/);
    expect(() => withFault(tool, { fault: 'empty', rate: 1.5, random })).toThrow(/rate/);
    expect(() => withFault(tool, { fault: 'empty', atCall: 0, random })).toThrow(/atCall/);
    expect(toolFaults).toHaveLength(8);
  });
});
