import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { TraceEvent } from '../trace/events.js';
import { memoryTraceSink, type TraceSink } from '../trace/sink.js';
import { runAgent } from './run-agent.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a key up.',
  effect: 'read',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => ({ key, value: key.length }),
});
const slowLookup = defineTool({
  name: 'slow_lookup',
  description: 'Look a key up, asynchronously.',
  effect: 'read',
  input: z.object({ key: z.string() }),
  execute: async ({ key }) => ({ key, value: key.length }),
});

const steps = (n: number, tool = 'lookup') =>
  scriptedModel([
    ...Array.from({ length: n }, (_, i) => ({ toolCalls: [{ name: tool, input: { key: `k${i}` } }] })),
    { text: 'done' },
  ]);

const budgets = { maxContextTokens: 1e9, maxBilledTokens: 1e9, maxWallMs: 1e9 };
const withoutHeader = ({ v: _v, runId: _r, seq: _s, at: _a, ...rest }: TraceEvent) => rest;

describe("traceBudgetChecks: 'changes'", () => {
  it('writes a budget check only when a reading other than the wall clock changed, and the rest of the trace is the same', async () => {
    const every = memoryTraceSink();
    const changes = memoryTraceSink();
    const a = await runAgent({
      model: steps(5),
      input: 'q',
      tools: [lookup],
      trace: every,
      ...budgets,
      clock: fakeClock(),
    });
    const b = await runAgent({
      model: steps(5),
      input: 'q',
      tools: [lookup],
      trace: changes,
      traceBudgetChecks: 'changes',
      ...budgets,
      clock: fakeClock(),
    });
    expect(b.outcome).toEqual(a.outcome);
    const checks = (events: TraceEvent[]) => events.filter((event) => event.type === 'budget-check');
    // The checks 'changes' keeps are exactly those of 'every' whose readings (less the wall clock)
    // differ from the last one kept: the after-results check usually repeats the next call's.
    const figures = (event: TraceEvent) =>
      JSON.stringify(
        (event as Extract<TraceEvent, { type: 'budget-check' }>).readings.filter(
          (r) => r.budget !== 'wall_ms',
        ),
      );
    const expected: string[] = [];
    for (const check of checks(every.events))
      if (expected.at(-1) !== figures(check)) expected.push(figures(check));
    expect(checks(every.events)).toHaveLength(11); // before each of 6 calls, after each of 5 batches
    expect(checks(changes.events).map(figures)).toEqual(expected);
    expect(expected.length).toBeLessThan(8);
    // Every other event is there, in the same order, with the same body.
    const others = (events: TraceEvent[]) =>
      events.filter((event) => event.type !== 'budget-check').map(withoutHeader);
    expect(others(changes.events)).toEqual(others(every.events));
    // seq stays dense: no gaps where a check was skipped.
    expect(changes.events.map((event) => event.seq)).toEqual(changes.events.map((_, i) => i));
  });

  it('always writes the check that fails', async () => {
    const sink = memoryTraceSink();
    const result = await runAgent({
      model: steps(5),
      input: 'q',
      tools: [lookup],
      trace: sink,
      traceBudgetChecks: 'changes',
      maxBilledTokens: 200,
      clock: fakeClock(),
    });
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'billed_tokens' });
    const last = sink.events.filter((event) => event.type === 'budget-check').at(-1);
    expect(last).toMatchObject({ type: 'budget-check', ok: false });
  });

  it('is a ConfigurationError when it is neither every nor changes', async () => {
    expect(() =>
      runAgent({ model: steps(0), input: 'q', traceBudgetChecks: 'sometimes' as 'every' }),
    ).toThrow(ConfigurationError);
  });
});

describe('events are written synchronously to synchronous sinks, and awaited from asynchronous ones', () => {
  it('a sink that answers with a promise holds the loop back until it settles, in order, for sync and async tools alike', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        async (asyncWrites, asyncTool) => {
          const written: number[] = [];
          let pending = 0;
          let maxPending = 0;
          let index = 0;
          const sink: TraceSink = {
            write(event) {
              const slow = asyncWrites[index++ % asyncWrites.length];
              if (!slow) {
                expect(pending).toBe(0);
                written.push(event.seq);
                return;
              }
              pending++;
              maxPending = Math.max(maxPending, pending);
              return new Promise<void>((resolve) =>
                setTimeout(() => {
                  pending--;
                  written.push(event.seq);
                  resolve();
                }, 0),
              );
            },
          };
          const memory = memoryTraceSink();
          const tool = asyncTool ? slowLookup : lookup;
          const result = await runAgent({
            model: steps(3, tool.name),
            input: 'q',
            tools: [tool],
            trace: [sink, memory],
          });
          expect(result.outcome.kind).toBe('answered');
          // Never two writes in flight, every event once, in seq order, and the same ones the memory sink holds.
          expect(maxPending).toBeLessThanOrEqual(1);
          expect(written).toEqual(memory.events.map((event) => event.seq));
          expect(written).toEqual(written.map((_, i) => i));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a sink that throws synchronously or rejects ends the run hard_error (source trace), after the same events', async () => {
    for (const fails of ['throws', 'rejects'] as const) {
      let calls = 0;
      const sink: TraceSink = {
        write() {
          calls++;
          if (calls < 6) return;
          if (fails === 'throws') throw new Error('disk full');
          return Promise.reject(new Error('disk full'));
        },
      };
      const result = await runAgent({ model: steps(3), input: 'q', tools: [lookup], trace: sink });
      expect(result.outcome).toMatchObject({ kind: 'hard_error', source: 'trace' });
    }
  });
});

describe('a tool that returns a plain value', () => {
  it('settles at once, and a synchronous tool that aborts the run mid-call is cancelled, not waited for', async () => {
    const controller = new AbortController();
    const stopper = defineTool({
      name: 'stopper',
      description: 'Stops the run while it runs.',
      effect: 'read',
      input: z.object({}),
      execute: (_input, context) => {
        const signal = context.signal;
        controller.abort('stop');
        return { aborted: signal.aborted };
      },
    });
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'stopper', input: {} }] }, { text: 'never' }]),
      input: 'q',
      tools: [stopper],
      signal: controller.signal,
    });
    expect(result.outcome).toEqual({ kind: 'cancelled', reason: 'stop' });
  });
});
