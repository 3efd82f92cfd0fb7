import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otelTraceSink } from '../src/otel/index.js';
import { runScenario } from '../src/scenarios/index.js';
import { fakeClock } from '../src/testing/fake-clock.js';
import { treeOf } from './support/span-tree.js';

/** An OTLP/HTTP receiver on loopback that keeps every JSON payload posted to /v1/traces. */
interface OtlpJsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpJsonValue[] };
}
interface OtlpJsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: OtlpJsonValue }[];
  events?: { name: string; attributes?: { key: string; value: OtlpJsonValue }[] }[];
  status?: { code?: number; message?: string };
}
interface OtlpJsonRequest {
  resourceSpans: { scopeSpans: { scope?: { name?: string }; spans: OtlpJsonSpan[] }[] }[];
}

let server: Server;
let url: string;
const received: { contentType: string | undefined; body: OtlpJsonRequest }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.method === 'POST')
        received.push({
          contentType: request.headers['content-type'],
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJsonRequest,
        });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function value(attribute: OtlpJsonValue | undefined): unknown {
  if (!attribute) return undefined;
  if (attribute.stringValue !== undefined) return attribute.stringValue;
  if (attribute.intValue !== undefined) return Number(attribute.intValue);
  if (attribute.boolValue !== undefined) return attribute.boolValue;
  if (attribute.doubleValue !== undefined) return attribute.doubleValue;
  if (attribute.arrayValue) return (attribute.arrayValue.values ?? []).map(value);
  return undefined;
}

const attributesOf = (list: { key: string; value: OtlpJsonValue }[] | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value: v }) => [key, value(v)]));

describe('reins/otel over OTLP/HTTP to a loopback receiver', () => {
  it('the wanders scenario arrives as JSON with the same span tree and GenAI attributes', async () => {
    const provider = new BasicTracerProvider({
      // One batch, so the spans arrive in the order they ended (siblings share a start time on the fake clock).
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
    });
    const sink = otelTraceSink({ tracer: provider.getTracer('reins'), meter: false, semconv: 'latest' });
    const run = await runScenario('wanders', {
      trace: sink,
      wrapToolExecution: sink.wrapToolExecution,
      clock: fakeClock(Date.UTC(2026, 0, 5, 12)),
      runId: 'run_wanders',
    });
    await provider.forceFlush();
    await provider.shutdown();

    expect(received).toHaveLength(1);
    expect(received[0]?.contentType).toMatch(/^application\/json/);
    const spans = received.flatMap(({ body }) =>
      body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
    );
    const expectedChildren = run.trace.flatMap((event) =>
      event.type === 'model-response'
        ? [{ name: 'chat scripted-lesson-model', children: [] }]
        : event.type === 'tool-result'
          ? [{ name: `execute_tool ${event.tool}`, children: [] }]
          : [],
    );
    expect(
      treeOf(
        spans.map((span) => ({
          name: span.name,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          startNs: BigInt(span.startTimeUnixNano),
        })),
      ),
    ).toEqual([{ name: 'invoke_agent reins', children: expectedChildren }]);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);

    const agent = spans.find((span) => span.name === 'invoke_agent reins');
    expect(attributesOf(agent?.attributes)).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'run_wanders',
      'gen_ai.provider.name': '_OTHER',
      'reins.outcome.kind': 'step_limit',
      'error.type': 'step_limit',
    });
    expect(agent?.status?.code).toBe(2);
    const outcome = agent?.events?.find((event) => event.name === 'reins.outcome');
    expect(attributesOf(outcome?.attributes)).toMatchObject({
      'reins.outcome.kind': 'step_limit',
      'reins.outcome.limit': 6,
      'reins.outcome.silent_failure': true,
    });
    const chat = spans.find((span) => span.name.startsWith('chat '));
    expect(chat?.kind).toBe(3); // CLIENT in OTLP's enum
    expect(attributesOf(chat?.attributes)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted-lesson-model',
    });
    expect(typeof attributesOf(chat?.attributes)['gen_ai.usage.input_tokens']).toBe('number');
    const tool = spans.find((span) => span.name.startsWith('execute_tool '));
    expect(Object.keys(attributesOf(tool?.attributes))).toEqual(
      expect.arrayContaining(['gen_ai.tool.name', 'gen_ai.tool.call.id', 'gen_ai.tool.type']),
    );
  });
});
