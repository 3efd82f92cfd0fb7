import { context, createContextKey, createNoopMeter, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { runScenario } from '../scenarios/index.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { otelTraceSink } from './otel-trace-sink.js';

// Nothing registered: no tracer provider, no meter provider, no context manager.
beforeEach(() => {
  trace.disable();
  metrics.disable();
  context.disable();
});
afterEach(() => {
  vi.restoreAllMocks();
  context.disable();
});

const start = Date.UTC(2026, 0, 5, 12);

/** The sink's tool wrapper, counting the calls it wraps; it declines a run as the sink's does. */
function counted(sink: ReturnType<typeof otelTraceSink>) {
  let wrapped = 0;
  const wrapper = sink.wrapToolExecution;
  const wrapToolExecution = Object.assign(
    (execute: () => unknown, call: Parameters<typeof wrapper>[1]) => {
      wrapped++;
      return wrapper(execute, call);
    },
    { ignores: (runId: string) => wrapper.ignores?.(runId) === true },
  );
  return { wrapToolExecution, wrapped: () => wrapped };
}

describe('otelTraceSink with nothing listening', () => {
  it('records into no instrument when no MeterProvider is registered', async () => {
    // The API's no-op instruments are shared singletons: a record on any of them lands here.
    const noop = createNoopMeter();
    const recorded = vi.spyOn(noop.createHistogram('probe'), 'record');
    const added = vi.spyOn(noop.createCounter('probe'), 'add');
    const sink = otelTraceSink();
    const run = await runScenario('happy', {
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
      clock: fakeClock(start),
    });
    expect(run.outcome.kind).toBe('answered');
    expect(run.steps).toBeGreaterThan(1);
    expect(recorded).not.toHaveBeenCalled();
    expect(added).not.toHaveBeenCalled();
  });

  it('calls a tool directly when no context manager is registered (one context probe per run)', async () => {
    const withContext = vi.spyOn(context, 'with');
    const sink = otelTraceSink();
    const run = await runScenario('happy', {
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
      clock: fakeClock(start),
    });
    expect(run.outcome.kind).toBe('answered');
    expect(run.steps).toBeGreaterThan(1);
    expect(withContext).toHaveBeenCalledTimes(1);
  });

  it("still runs a tool in the caller's context when a context manager is registered but no SDK", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const key = createContextKey('caller');
    const seen: unknown[] = [];
    const probeTool = defineTool({
      effect: 'read',
      name: 'probe',
      description: 'Reads the active context.',
      input: z.object({}),
      execute: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        seen.push(context.active().getValue(key));
        return 'ok';
      },
    });
    const sink = otelTraceSink();
    const run = await context.with(context.active().setValue(key, 'request-7'), () =>
      runAgent({
        model: scriptedModel([{ toolCalls: [{ name: 'probe', input: {}, id: 'c1' }] }, { text: 'done' }]),
        input: 'q',
        tools: [probeTool],
        clock: fakeClock(start),
        trace: sink,
        wrapToolExecution: sink.wrapToolExecution,
      }),
    );
    expect(run.outcome.kind).toBe('answered');
    expect(seen).toEqual(['request-7']);
  });

  it('drops out of a run it can do nothing for: run-start is the only event it is written, its wrapper is never called', async () => {
    const sink = otelTraceSink();
    const written: string[] = [];
    const write = sink.write.bind(sink);
    sink.write = (event) => {
      written.push(event.type);
      write(event);
    };
    const { wrapToolExecution: counting, wrapped: wrappedCount } = counted(sink);
    const run = await runScenario('happy', {
      trace: sink,
      wrapToolExecution: counting,
      clock: fakeClock(start),
    });
    expect(run.outcome.kind).toBe('answered');
    expect(run.steps).toBeGreaterThan(1);
    expect(written).toEqual(['run-start']);
    expect(wrappedCount()).toBe(0);
    // Nothing of the run is kept: a later run starts clean, and asks again.
    const again = await runScenario('happy', {
      trace: sink,
      wrapToolExecution: counting,
      clock: fakeClock(start),
    });
    expect(again.outcome.kind).toBe('answered');
    expect(written).toEqual(['run-start', 'run-start']);
  });

  it('stays for every event when it records metrics, or when a context manager needs the tool wrapped', async () => {
    // A real meter (an SDK MeterProvider passed in): the sink records run metrics, so it keeps every event.
    const sink = otelTraceSink({ meter: new MeterProvider().getMeter('probe') });
    const written: string[] = [];
    const write = sink.write.bind(sink);
    sink.write = (event) => {
      written.push(event.type);
      write(event);
    };
    await runScenario('happy', {
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
      clock: fakeClock(start),
    });
    expect(written).toContain('run-end');

    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const traced = otelTraceSink();
    const { wrapToolExecution: counting, wrapped: wrappedCount } = counted(traced);
    const run = await runScenario('happy', {
      trace: traced,
      wrapToolExecution: counting,
      clock: fakeClock(start),
    });
    expect(run.outcome.kind).toBe('answered');
    expect(wrappedCount()).toBeGreaterThan(0);
  });
});
