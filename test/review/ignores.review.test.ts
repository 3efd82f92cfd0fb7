import {
  type Context,
  context,
  createContextKey,
  INVALID_SPAN_CONTEXT,
  metrics,
  type Span,
  type SpanOptions,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentTool } from '../../src/loop/agent-tool.js';
import { resumeAgent, runAgent } from '../../src/loop/run-agent.js';
import { otelTraceSink } from '../../src/otel/otel-trace-sink.js';
import { fakeClock } from '../../src/testing/fake-clock.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { memoryTraceSink, type TraceSink } from '../../src/trace/sink.js';

beforeEach(() => {
  trace.disable();
  metrics.disable();
  context.disable();
});
afterEach(() => {
  vi.restoreAllMocks();
  trace.disable();
  metrics.disable();
  context.disable();
});

const start = Date.UTC(2026, 0, 5, 12);
const wire = (wires: number[]) =>
  defineTool({
    name: 'wire',
    description: 'Send money.',
    effect: 'destructive',
    input: z.object({ amount: z.number() }),
    execute: async ({ amount }) => {
      await new Promise((resolve) => setImmediate(resolve));
      wires.push(amount);
      seenContext.push(context.active().getValue(callerKey));
      return 'sent';
    },
  });
const callerKey = createContextKey('caller');
const seenContext: unknown[] = [];
const payTurn = { text: 'paying', toolCalls: [{ name: 'wire', input: { amount: 5 } }] };
const approvalOf = (outcome: { kind: string; requests?: { approvalId: string }[] }) =>
  outcome.kind === 'awaiting_approval' ? (outcome.requests?.[0]?.approvalId as string) : '';

const record = (executed: string[]) =>
  defineTool({
    name: 'record',
    description: 'Records a step.',
    effect: 'read',
    input: z.object({ step: z.number() }),
    execute: async ({ step }) => {
      await new Promise((resolve) => setImmediate(resolve));
      executed.push(`${step}`);
      return 'ok';
    },
  });
const turn = (step: number) => ({ text: `step ${step}`, toolCalls: [{ name: 'record', input: { step } }] });

/** Counts how often the sink's wrapper actually runs. */
function counted(sink: ReturnType<typeof otelTraceSink>) {
  let calls = 0;
  const wrap = sink.wrapToolExecution;
  const counting = Object.assign(
    (execute: () => unknown, call: Parameters<typeof wrap>[1]) => {
      calls++;
      return wrap(execute, call);
    },
    { ignores: (runId: string) => wrap.ignores?.(runId) ?? false },
  );
  return { wrapToolExecution: counting, calls: () => calls };
}

/**
 * A tracer that records for runs whose id starts with "live" (and their children), and is a no-op
 * (invalid span context) for every other run: one shared sink, some runs inert, some not.
 */
function splitTracer(exporter: InMemorySpanExporter): Tracer {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const real = provider.getTracer('split');
  const noop = (): Span => trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  const pick = (options: SpanOptions | undefined, ctx: Context | undefined) => {
    const id = options?.attributes?.['reins.run.id'];
    const parent = ctx ? trace.getSpan(ctx) : undefined;
    return (typeof id === 'string' && id.startsWith('live')) || parent?.isRecording() === true;
  };
  return {
    startSpan: (name, options, ctx) => (pick(options, ctx) ? real.startSpan(name, options, ctx) : noop()),
    startActiveSpan: (() => {
      throw new Error('unused');
    }) as Tracer['startActiveSpan'],
  };
}

describe('otel sink shared by concurrent runs, some inert', () => {
  it('the inert run is dropped, the live run still gets all its spans (tool spans through the wrapper)', async () => {
    const exporter = new InMemorySpanExporter();
    const sink = otelTraceSink({ tracer: splitTracer(exporter), meter: false });
    const write = vi.spyOn(sink, 'write');
    const { wrapToolExecution, calls } = counted(sink);
    const executed: string[] = [];
    const go = (runId: string) =>
      runAgent({
        model: scriptedModel([turn(1), turn(2), { text: 'done' }]),
        input: 'go',
        tools: [record(executed)],
        runId,
        clock: fakeClock(start),
        trace: sink,
        wrapToolExecution,
      });
    const [a, b, c] = await Promise.all([go('inert-1'), go('live-1'), go('inert-2')]);
    expect([a.outcome.kind, b.outcome.kind, c.outcome.kind]).toEqual(['answered', 'answered', 'answered']);
    const byRun = (id: string) => write.mock.calls.filter(([e]) => e.runId === id).map(([e]) => e.type);
    expect(byRun('inert-1')).toEqual(['run-start']);
    expect(byRun('inert-2')).toEqual(['run-start']);
    expect(byRun('live-1').at(-1)).toBe('run-end');
    expect(calls()).toBe(2); // only live-1's two tool calls were wrapped
    const names = exporter
      .getFinishedSpans()
      .map((s) => s.name)
      .sort();
    expect(names).toEqual(
      [
        'chat scripted',
        'chat scripted',
        'chat scripted',
        'execute_tool record',
        'execute_tool record',
        'invoke_agent reins',
      ].sort(),
    );
    // No entry is left for any run (the wrapper no longer holds any of them).
    for (const id of ['inert-1', 'inert-2', 'live-1'])
      expect(sink.wrapToolExecution.ignores?.(id)).toBe(true);
  });
});

describe('otel sink, nothing registered', () => {
  it('passed twice: the run completes, flush is called once per listing, nothing is left held', async () => {
    const sink = otelTraceSink();
    const flush = vi.fn();
    (sink as TraceSink).flush = flush;
    const write = vi.spyOn(sink, 'write');
    const mem = memoryTraceSink();
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      runId: 'twice',
      clock: fakeClock(start),
      trace: [sink, sink, mem],
      wrapToolExecution: sink.wrapToolExecution,
    });
    expect(run.outcome.kind).toBe('answered');
    expect(flush).toHaveBeenCalledTimes(2);
    expect(sink.wrapToolExecution.ignores?.('twice')).toBe(true);
    // The second listing is not ignored (the first forgot the run), so it gets every event: wasteful, harmless.
    expect(write.mock.calls.length).toBe(1 + mem.events.length);
  });

  it('an async sink before it: the otel sink is asked after the async write settles and gets only run-start', async () => {
    const sink = otelTraceSink();
    const write = vi.spyOn(sink, 'write');
    const slow: TraceSink = { write: () => new Promise((resolve) => setTimeout(resolve, 1)) };
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      runId: 'slow-first',
      clock: fakeClock(start),
      trace: [slow, sink],
      wrapToolExecution: sink.wrapToolExecution,
    });
    expect(run.outcome.kind).toBe('answered');
    expect(write.mock.calls.map(([e]) => e.type)).toEqual(['run-start']);
  });

  // Older than TraceSink.ignores (it failed the same at 602de8c^): a sink that failed broke the
  // emitter, no sink got the run-end after that, and the otel sink never ended the agent span.
  it('fixed: a later sink rejecting run-start no longer leaves the otel sink’s agent span open (the others get run-end after a sink fails)', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const sink = otelTraceSink({ tracer: provider.getTracer('t'), meter: false });
    const failing: TraceSink = {
      write: (event) => (event.type === 'run-start' ? Promise.reject(new Error('disk full')) : undefined),
    };
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      runId: 'broken-start',
      clock: fakeClock(start),
      trace: [sink, failing],
      wrapToolExecution: sink.wrapToolExecution,
    });
    expect(run.outcome).toMatchObject({ kind: 'hard_error', source: 'trace' });
    // The sink got run-start, never run-end (the emitter is broken): the entry and the span stay open.
    expect(exporter.getFinishedSpans().map((span) => span.name)).toContain('invoke_agent reins');
  });

  it('pause for approval then resume with a checkpoint store (exactly-once): each segment asks again, the wrapper never runs', async () => {
    const sink = otelTraceSink();
    const write = vi.spyOn(sink, 'write');
    const { wrapToolExecution, calls } = counted(sink);
    const wires: number[] = [];
    const wire = defineTool({
      name: 'wire',
      description: 'Send money.',
      effect: 'destructive',
      input: z.object({ amount: z.number() }),
      execute: ({ amount }) => {
        wires.push(amount);
        return 'sent';
      },
    });
    const store = new MemoryCheckpointStore();
    const first = await runAgent({
      model: scriptedModel([{ text: 'paying', toolCalls: [{ name: 'wire', input: { amount: 5 } }] }]),
      input: 'pay',
      tools: [wire],
      runId: 'pay',
      clock: fakeClock(start),
      checkpoint: store,
      trace: sink,
      wrapToolExecution,
    });
    expect(first.outcome.kind).toBe('awaiting_approval');
    const approvalId =
      first.outcome.kind === 'awaiting_approval' ? first.outcome.requests[0]?.approvalId : '';
    const second = await resumeAgent(first.state, {
      model: scriptedModel([{ text: 'paid' }]),
      tools: [wire],
      approvals: [{ approvalId: approvalId as string, decision: 'approve', by: 'ops' }],
      clock: fakeClock(start),
      checkpoint: store,
      trace: sink,
      wrapToolExecution,
    });
    expect(second.outcome).toEqual({ kind: 'answered', text: 'paid' });
    expect(wires).toEqual([5]);
    expect(calls()).toBe(0);
    expect(write.mock.calls.map(([e]) => [e.type, (e as { segment?: number }).segment])).toEqual([
      ['run-start', 0],
      ['run-start', 1],
    ]);
    expect(sink.wrapToolExecution.ignores?.('pay')).toBe(true);
  });

  it('a context manager registered between segments: the resumed segment is followed and its tool runs in the caller context', async () => {
    const sink = otelTraceSink();
    const { wrapToolExecution, calls } = counted(sink);
    const store = new MemoryCheckpointStore();
    const wires: number[] = [];
    const first = await runAgent({
      model: scriptedModel([payTurn]),
      input: 'go',
      tools: [wire(wires)],
      runId: 'seg',
      clock: fakeClock(start),
      checkpoint: store,
      trace: sink,
      wrapToolExecution,
    });
    expect(first.outcome.kind).toBe('awaiting_approval');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    seenContext.length = 0;
    const second = await context.with(context.active().setValue(callerKey, 'req-9'), () =>
      resumeAgent(first.state, {
        model: scriptedModel([{ text: 'done' }]),
        tools: [wire(wires)],
        approvals: [{ approvalId: approvalOf(first.outcome as never), decision: 'approve', by: 'ops' }],
        clock: fakeClock(start),
        checkpoint: store,
        trace: sink,
        wrapToolExecution,
      }),
    );
    expect(second.outcome.kind).toBe('answered');
    expect(wires).toEqual([5]);
    expect(calls()).toBe(1);
    expect(seenContext).toEqual(['req-9']);
  });

  it('a sub-agent with its own otel sink: the child is dropped too, the parent answers', async () => {
    const sink = otelTraceSink();
    const write = vi.spyOn(sink, 'write');
    const { wrapToolExecution, calls } = counted(sink);
    const research = agentTool({
      name: 'research',
      description: 'Research.',
      input: z.object({ q: z.string() }),
      agent: ({ q }) => ({
        model: scriptedModel([turn(1), { text: `about ${q}` }]),
        input: q,
        tools: [record([])],
        trace: sink,
        wrapToolExecution,
        clock: fakeClock(start),
      }),
    });
    const run = await runAgent({
      model: scriptedModel([
        { text: 'asking', toolCalls: [{ name: 'research', input: { q: 'x' } }] },
        { text: 'done' },
      ]),
      input: 'go',
      tools: [research],
      runId: 'parent',
      clock: fakeClock(start),
      trace: sink,
      wrapToolExecution,
    });
    expect(run.outcome.kind).toBe('answered');
    expect(calls()).toBe(0);
    expect(write.mock.calls.map(([e]) => `${e.runId}:${e.type}`)).toEqual([
      'parent:run-start',
      expect.stringMatching(/^parent\..*:run-start$/),
    ]);
  });
});

describe('held events', () => {
  it('nextSeq of a resumed run is asked of an ignoring sink too', async () => {
    const asked: string[] = [];
    const ignoring: TraceSink = {
      write: () => undefined,
      ignores: () => true,
      nextSeq: (runId) => {
        asked.push(runId);
        return 100;
      },
    };
    const store = new MemoryCheckpointStore();
    const wires: number[] = [];
    const first = await runAgent({
      model: scriptedModel([payTurn]),
      input: 'go',
      tools: [wire(wires)],
      runId: 'seq',
      clock: fakeClock(start),
      checkpoint: store,
      trace: ignoring,
    });
    const mem = memoryTraceSink();
    const second = await resumeAgent(first.state, {
      model: scriptedModel([{ text: 'done' }]),
      tools: [wire(wires)],
      approvals: [{ approvalId: approvalOf(first.outcome as never), decision: 'approve', by: 'ops' }],
      clock: fakeClock(start),
      checkpoint: store,
      trace: [ignoring, mem],
    });
    expect(second.outcome.kind).toBe('answered');
    expect(asked).toEqual(['seq']);
    expect((mem.events[0] as TraceEvent).seq).toBe(100);
  });
});
