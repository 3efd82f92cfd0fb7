import { context, metrics, ProxyTracerProvider, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { spanTree } from '../../test/support/span-tree.js';
import { isConfigurationError } from '../errors/reins-error.js';
import { resumeAgent, runAgent } from '../loop/run-agent.js';
import { runScenario, type ScenarioName } from '../scenarios/index.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { inferProvider, type OtelTraceSinkOptions, otelTraceSink } from './otel-trace-sink.js';
import { genAiSemconvFromEnvironment } from './semconv.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('reins-test');

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(() => {
  trace.disable();
  context.disable();
  metrics.disable();
});
afterEach(() => exporter.reset());

const start = Date.UTC(2026, 0, 5, 12);
const prices = { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } };

async function scenarioSpans(name: ScenarioName, options: OtelTraceSinkOptions = {}) {
  const sink = otelTraceSink({ tracer, meter: false, semconv: 'latest', ...options });
  const run = await runScenario(name, {
    trace: sink,
    wrapToolExecution: sink.wrapToolExecution,
    clock: fakeClock(start),
    runId: `run_${name}`,
    prices,
  });
  return { run, spans: exporter.getFinishedSpans() };
}

const byName = (spans: readonly ReadableSpan[], prefix: string) =>
  spans.filter((span) => span.name.startsWith(prefix));

describe('otelTraceSink: the lesson scenarios as GenAI spans', () => {
  it('happy: one invoke_agent span, a chat span per model call and an execute_tool span per tool call under it', async () => {
    const { run, spans } = await scenarioSpans('happy');
    const toolCalls = run.trace.filter((event) => event.type === 'tool-result');
    const modelCalls = run.trace.filter((event) => event.type === 'model-response');
    expect(spanTree(spans)).toEqual([
      {
        name: 'invoke_agent reins',
        children: run.trace.flatMap((event) =>
          event.type === 'model-response'
            ? [{ name: 'chat scripted-lesson-model', children: [] }]
            : event.type === 'tool-result'
              ? [{ name: `execute_tool ${event.tool}`, children: [] }]
              : [],
        ),
      },
    ]);
    expect(byName(spans, 'chat')).toHaveLength(modelCalls.length);
    expect(byName(spans, 'execute_tool')).toHaveLength(toolCalls.length);
    const [agent] = byName(spans, 'invoke_agent');
    expect(agent?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'reins',
      'gen_ai.conversation.id': 'run_happy',
      'gen_ai.request.model': 'scripted-lesson-model',
      'gen_ai.provider.name': '_OTHER',
      'reins.outcome.kind': 'answered',
      'reins.run.steps': run.steps,
    });
    expect(agent?.status.code).toBe(0);
    // Span times are the trace's times, on the run's clock.
    expect(agent?.startTime).toEqual([Math.floor(start / 1_000), (start % 1_000) * 1e6]);
    const chat = byName(spans, 'chat')[0];
    const firstResponse = modelCalls[0] as Extract<(typeof modelCalls)[number], { type: 'model-response' }>;
    expect(chat?.kind).toBe(2); // CLIENT
    expect(chat?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted-lesson-model',
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.usage.output_tokens': firstResponse.response.usage?.outputTokens,
    });
    const tool = byName(spans, 'execute_tool')[0];
    const firstResult = toolCalls[0] as Extract<(typeof toolCalls)[number], { type: 'tool-result' }>;
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': firstResult.tool,
      'gen_ai.tool.call.id': firstResult.callId,
      'gen_ai.tool.type': 'function',
      'reins.tool.status': 'ok',
    });
    // Only decisive checks by default: nothing was repeated, denied or over budget.
    expect(agent?.events.map((event) => event.name)).toEqual(['reins.outcome']);
    expect(agent?.events.at(-1)).toMatchObject({
      name: 'reins.outcome',
      attributes: { 'reins.outcome.kind': 'answered', 'reins.outcome.silent_failure': false },
    });
    // Content is off by default.
    for (const span of spans)
      for (const key of Object.keys(span.attributes))
        expect(key).not.toMatch(/messages|arguments|result|instructions/);
  });

  it('loops: the agent span fails with error.type looped and the repeat check that tripped is an event', async () => {
    const { spans } = await scenarioSpans('loops');
    const [agent] = byName(spans, 'invoke_agent');
    expect(agent?.status).toMatchObject({ code: 2 });
    expect(agent?.attributes['error.type']).toBe('looped');
    const repeats = agent?.events.filter((event) => event.name === 'reins.repeat_check') ?? [];
    expect(repeats.at(-1)?.attributes).toMatchObject({
      'gen_ai.tool.name': 'get_latency_breakdown',
      'reins.repeat.repeated': true,
    });
    expect(repeats.at(-1)?.attributes?.['reins.repeat.key']).toBeUndefined();
    expect(agent?.events.at(-1)?.attributes).toMatchObject({
      'reins.outcome.kind': 'looped',
      'reins.outcome.reason': 'repeated_call',
      'reins.outcome.silent_failure': true,
    });
  });

  it('drowns: over_budget names the budget in the outcome event and the failing budget check', async () => {
    const { spans } = await scenarioSpans('drowns');
    const [agent] = byName(spans, 'invoke_agent');
    expect(agent?.attributes['error.type']).toBe('over_budget');
    const failed = agent?.events.find(
      (event) => event.name === 'reins.budget_check' && event.attributes?.['reins.budget.ok'] === false,
    );
    expect(failed?.attributes?.['reins.budget.exceeded']).toEqual(['context_tokens']);
    expect(agent?.events.at(-1)?.attributes).toMatchObject({
      'reins.outcome.budget': 'context_tokens',
      'reins.outcome.limit': 8_000,
    });
  });

  it('wanders: step_limit, with a chat span for each of the six model calls', async () => {
    const { spans } = await scenarioSpans('wanders');
    const [agent] = byName(spans, 'invoke_agent');
    expect(agent?.attributes['error.type']).toBe('step_limit');
    expect(byName(spans, 'chat')).toHaveLength(6);
    expect(byName(spans, 'execute_tool')).toHaveLength(5);
  });

  it("controlEvents: 'all' records every check, passing ones too, in trace order", async () => {
    const { run, spans } = await scenarioSpans('happy', { controlEvents: 'all' });
    const [agent] = byName(spans, 'invoke_agent');
    const names: Record<string, string> = {
      'budget-check': 'reins.budget_check',
      'repeat-check': 'reins.repeat_check',
      authorization: 'reins.authorization',
      'run-end': 'reins.outcome',
    };
    expect(agent?.events.map((event) => event.name)).toEqual(
      run.trace.flatMap((event) => (names[event.type] ? [names[event.type]] : [])),
    );
  });

  it('v1.36 names by default: gen_ai.system, no cache token attributes', async () => {
    const { spans } = await scenarioSpans('happy', { semconv: 'v1.36' });
    const chat = byName(spans, 'chat')[0];
    expect(chat?.attributes['gen_ai.system']).toBe('_OTHER');
    expect(chat?.attributes['gen_ai.provider.name']).toBeUndefined();
    expect(chat?.attributes['gen_ai.usage.cache_read.input_tokens']).toBeUndefined();
    expect(genAiSemconvFromEnvironment({})).toBe('v1.36');
    expect(
      genAiSemconvFromEnvironment({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http, gen_ai_latest_experimental' }),
    ).toBe('latest');
  });

  it('captures content only when asked, cut to maxChars', async () => {
    const { spans } = await scenarioSpans('happy', { captureContent: { maxChars: 40 } });
    const tool = byName(spans, 'execute_tool')[0];
    const result = tool?.attributes['gen_ai.tool.call.result'];
    expect(typeof result).toBe('string');
    expect(result as string).toMatch(/^.{40}…\[\d+ more chars\]$/s);
    expect(typeof tool?.attributes['gen_ai.tool.call.arguments']).toBe('string');
    const [agent] = byName(spans, 'invoke_agent');
    expect(typeof agent?.attributes['gen_ai.input.messages']).toBe('string');
    expect(typeof byName(spans, 'chat')[0]?.attributes['gen_ai.output.messages']).toBe('string');
  });
});

describe('otelTraceSink: errors', () => {
  it('a model that throws: the chat span fails with error.type, the agent span with hard_error.model', async () => {
    const sink = otelTraceSink({ tracer, meter: false });
    const failure = Object.assign(new Error('bad request'), { name: 'InvalidRequestError', status: 400 });
    const result = await runAgent({
      model: scriptedModel([{ throws: failure }]),
      input: 'q',
      clock: fakeClock(start),
      trace: sink,
    });
    expect(result.outcome.kind).toBe('hard_error');
    const spans = exporter.getFinishedSpans();
    const [chat] = byName(spans, 'chat');
    expect(chat?.status).toEqual({ code: 2, message: 'bad request' });
    expect(chat?.attributes['error.type']).toBe('InvalidRequestError');
    const [agent] = byName(spans, 'invoke_agent');
    expect(agent?.status.code).toBe(2);
    expect(agent?.attributes['error.type']).toBe('hard_error.model');
  });

  it('a tool that throws: its execute_tool span fails, the run goes on', async () => {
    const flaky = defineTool({
      effect: 'read',
      name: 'flaky',
      description: 'x',
      input: z.object({}),
      execute: () => {
        throw new TypeError('boom');
      },
    });
    const sink = otelTraceSink({ tracer, meter: false });
    await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'flaky', input: {}, id: 'c1' }] }, { text: 'done' }]),
      input: 'q',
      tools: [flaky],
      clock: fakeClock(start),
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
    });
    const spans = exporter.getFinishedSpans();
    const [tool] = byName(spans, 'execute_tool');
    expect(tool?.status.code).toBe(2);
    expect(tool?.attributes).toMatchObject({ 'error.type': 'TypeError', 'reins.tool.status': 'error' });
    expect(byName(spans, 'invoke_agent')[0]?.status.code).toBe(0);
  });

  it('refuses options it cannot honour, naming them', () => {
    const optionOf = (options: OtelTraceSinkOptions) => {
      try {
        otelTraceSink(options);
      } catch (thrown) {
        return isConfigurationError(thrown) ? thrown.option : 'other';
      }
      return undefined;
    };
    expect(optionOf({ captureContent: { maxChars: 0 } })).toBe('captureContent.maxChars');
    expect(optionOf({ controlEvents: 'some' as 'all' })).toBe('controlEvents');
    expect(optionOf({ semconv: 'v2' as 'latest' })).toBe('semconv');
  });

  it('names the provider from the model id, or _OTHER', () => {
    expect(
      ['claude-sonnet-4-5', 'gpt-5', 'o3-mini', 'gemini-2.5-pro', 'mistral-large', 'llama-3'].map(
        inferProvider,
      ),
    ).toEqual(['anthropic', 'openai', 'openai', 'gcp.gemini', 'mistral_ai', '_OTHER']);
  });
});

describe('otelTraceSink: a run paused for approval and resumed', () => {
  it('is two invoke_agent spans with one gen_ai.conversation.id: the pause is not an error, the approval is an event on the resumed one', async () => {
    const wire = defineTool({
      name: 'wire_money',
      description: 'Send money.',
      effect: 'destructive',
      input: z.object({ amount: z.number() }),
      execute: ({ amount }) => ({ sent: amount }),
    });
    const sink = otelTraceSink({ tracer, meter: false });
    const paused = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'wire_money', input: { amount: 120 }, id: 'c1' }] }]),
      input: 'pay invoice 7',
      tools: [wire],
      runId: 'pay-1',
      clock: fakeClock(start),
      trace: sink,
    });
    expect(paused.outcome.kind).toBe('awaiting_approval');
    const approvalId =
      paused.outcome.kind === 'awaiting_approval' ? paused.outcome.requests[0]?.approvalId : '';
    const resumed = await resumeAgent(paused.state, {
      model: scriptedModel([{ text: 'Paid.' }]),
      tools: [wire],
      approvals: [{ approvalId: approvalId as string, decision: 'approve', by: 'ops' }],
      clock: fakeClock(start + 60_000),
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
    });
    expect(resumed.outcome.kind).toBe('answered');
    const agents = byName(exporter.getFinishedSpans(), 'invoke_agent');
    expect(
      agents.map((span) => [
        span.attributes['reins.run.segment'],
        span.attributes['reins.outcome.kind'],
        span.status.code,
      ]),
    ).toEqual([
      [0, 'awaiting_approval', 0],
      [1, 'answered', 0],
    ]);
    expect(agents[0]?.events.map((event) => event.name)).toEqual(['reins.approval_request', 'reins.outcome']);
    expect(agents[1]?.events.find((event) => event.name === 'reins.approval')?.attributes).toMatchObject({
      'reins.approval.decision': 'approve',
      'reins.approval.by': 'ops',
    });
    expect(new Set(agents.map((span) => span.attributes['gen_ai.conversation.id']))).toEqual(
      new Set(['pay-1']),
    );
  });
});

describe('otelTraceSink: context propagation into a tool', () => {
  it("a span the tool starts inside execute is a child of the call's execute_tool span, under the caller's span", async () => {
    const fetchTool = defineTool({
      effect: 'read',
      name: 'fetch_page',
      description: 'Fetch a page.',
      input: z.object({ url: z.string() }),
      execute: async ({ url }) => {
        await new Promise((resolve) => setImmediate(resolve));
        return trace.getTracer('http').startActiveSpan('GET', (span) => {
          span.end();
          return url.length;
        });
      },
    });
    const sink = otelTraceSink({ tracer, meter: false });
    await tracer.startActiveSpan('handle request', async (request) => {
      await runAgent({
        model: scriptedModel([
          { toolCalls: [{ name: 'fetch_page', input: { url: 'https://example.test' }, id: 'c1' }] },
          { text: 'done' },
        ]),
        input: 'q',
        tools: [fetchTool],
        clock: fakeClock(start),
        trace: sink,
        wrapToolExecution: sink.wrapToolExecution,
      });
      request.end();
    });
    expect(spanTree(exporter.getFinishedSpans())).toEqual([
      {
        name: 'handle request',
        children: [
          {
            name: 'invoke_agent reins',
            children: [
              { name: 'chat scripted', children: [] },
              { name: 'execute_tool fetch_page', children: [{ name: 'GET', children: [] }] },
              { name: 'chat scripted', children: [] },
            ],
          },
        ],
      },
    ]);
  });
});

describe('otelTraceSink: metrics', () => {
  it('records token usage by type, operation duration, runs by outcome, the silent-failure ratio and tool calls', async () => {
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const sink = otelTraceSink({ tracer, meter: meterProvider.getMeter('reins') });
    const runs: Record<string, number> = {};
    for (const name of ['happy', 'loops', 'drowns', 'wanders'] as const) {
      const run = await runScenario(name, {
        trace: sink,
        clock: fakeClock(start),
        runId: `run_${name}`,
        prices,
      });
      runs[name] = run.steps;
    }
    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const metric = (name: string) => all.find((entry) => entry.descriptor.name === name);
    const points = (name: string) =>
      (metric(name)?.dataPoints ?? []) as { attributes: Record<string, unknown>; value: unknown }[];

    const tokenTypes = points('gen_ai.client.token.usage').map(
      (point) => point.attributes['gen_ai.token.type'],
    );
    expect(new Set(tokenTypes)).toEqual(new Set(['input', 'output']));
    expect(metric('gen_ai.client.token.usage')?.descriptor.unit).toBe('{token}');
    expect(metric('gen_ai.client.operation.duration')?.descriptor.unit).toBe('s');
    const modelCalls = Object.values(runs).reduce((sum, steps) => sum + steps, 0);
    const durationCount = points('gen_ai.client.operation.duration').reduce(
      (sum, point) => sum + (point.value as { count: number }).count,
      0,
    );
    expect(durationCount).toBe(modelCalls);

    const byKind = Object.fromEntries(
      points('reins.runs').map((point) => [point.attributes['reins.outcome.kind'], point.value]),
    );
    expect(byKind).toEqual({ answered: 1, looped: 1, over_budget: 1, step_limit: 1 });
    expect(points('reins.runs.silent_failure_ratio')[0]?.value).toBe(0.75);
    expect(points('reins.runs.step_limit_rate')[0]?.value).toBe(0.25);
    expect(points('reins.runs.cost_per_success')[0]?.value).toBeGreaterThan(0);
    const toolCalls = points('reins.tool.calls').reduce((sum, point) => sum + (point.value as number), 0);
    expect(toolCalls).toBeGreaterThan(0);
    await meterProvider.shutdown();
  });

  it('with no SDK behind the tracer it makes no spans but still records every metric and runs every tool', async () => {
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const noopTracer = new ProxyTracerProvider().getTracer('no-sdk');
    const sink = otelTraceSink({ tracer: noopTracer, meter: meterProvider.getMeter('reins') });
    const run = await runScenario('happy', {
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
      clock: fakeClock(start),
      runId: 'run_no_sdk',
      prices,
    });
    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const sum = (name: string, read: (value: unknown) => number) =>
      (all.find((entry) => entry.descriptor.name === name)?.dataPoints ?? []).reduce(
        (total, point) => total + read(point.value),
        0,
      );
    expect(run.outcome.kind).toBe('answered');
    expect(sum('gen_ai.client.operation.duration', (value) => (value as { count: number }).count)).toBe(
      run.steps,
    );
    expect(sum('reins.tool.calls', (value) => value as number)).toBe(run.steps - 1);
    expect(exporter.getFinishedSpans()).toEqual([]);
    await meterProvider.shutdown();
  });
});
