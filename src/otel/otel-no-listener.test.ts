import { context, createContextKey, createNoopMeter, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
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
});
