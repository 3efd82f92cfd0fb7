/**
 * What `reins/otel` costs per step on the 50-step loop benchmark's run (every control on, trace in
 * memory, 10 tools, no adapter conversion): the same run with `otelTraceSink` added, once against
 * the no-op API (no SDK registered: what a library user pays before wiring a backend) and once
 * against the real SDK (BasicTracerProvider, SimpleSpanProcessor into an InMemorySpanExporter, the
 * async-hooks context manager, a MeterProvider with a reader; spans and metrics recorded). The bars:
 * ≤ 5 % with the no-op API, ≤ 15 % with the SDK. A fourth contender swaps the SimpleSpanProcessor
 * for a BatchSpanProcessor (NodeSDK's default), flushed at the end of each timed run. The batch one is
 * what production runs; the simple one is a debugging setup whose in-memory export costs a timer and a
 * chain of promises per span, so its figure says more about that exporter than about reins/otel.
 *
 * Two more rows, `sdk-floor` and `sdk-floor-batch`, make the same SDK calls that reins/otel makes
 * for such a run (the same spans with the same names, attributes, span event, parent context and
 * `context.with` around each tool; the same metric records), directly, in a loop with no reins run:
 * what the SDK alone costs per step. reins/otel's own share is then what is left of the SDK row
 * once the baseline and the floor are taken away.
 *
 * Method as in loop-overhead.ts: one fresh child process per (contender, round), rotated across
 * rounds; each child warms up for `--warmup-ms` (2 s: the SDK's code paths take a while to settle),
 * then times runs for `--time-ms` (1 s); the figure is the median over rounds (≥ 5). Children fail
 * unless every run answered after steps + 1 model calls (and, with the SDK, exported one span per
 * model call and tool call plus the agent span).
 *
 *   npx tsx bench/otel-overhead.ts [--rounds 5] [--steps 50] [--warmup-ms 2000] [--time-ms 1000] [--json FILE]
 *   (after npm run build)
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { type Attributes, context, metrics, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool, type Model, type ModelResponse, memoryTraceSink, runAgent } from '../dist/index.js';
import { otelTraceSink } from '../dist/otel/index.js';
import { benchMeta, median, option } from './stats.js';

const contenders = [
  'baseline',
  'otel-noop',
  'otel-sdk',
  'otel-sdk-batch',
  'sdk-floor',
  'sdk-floor-batch',
] as const;
type Contender = (typeof contenders)[number];
const labels: Record<Contender, string> = {
  baseline: 'reins, no telemetry',
  'otel-noop': 'reins + reins/otel, no-op API',
  'otel-sdk': 'reins + reins/otel, SDK + in-memory exporter',
  'otel-sdk-batch': 'the same, BatchSpanProcessor (flushed each run)',
  'sdk-floor': "SDK floor: reins/otel's spans and metrics made directly, no reins (simple processor)",
  'sdk-floor-batch': 'SDK floor, BatchSpanProcessor (flushed each run)',
};
/** The reins/otel row each floor is the floor of. */
const floorOf: Partial<Record<Contender, Contender>> = {
  'otel-sdk': 'sdk-floor',
  'otel-sdk-batch': 'sdk-floor-batch',
};
const toolNames = Array.from({ length: 10 }, (_, i) => `tool_${i}`);
const inputSchema = z.object({ query: z.string(), limit: z.number().int() });
const answer = 'All checks done.';

class BenchReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** One run of `steps` tool steps plus the answer, with the contender's telemetry; throws if it went wrong. */
function contender(name: Contender, steps: number): () => Promise<void> {
  const responses: ModelResponse[] = [
    ...Array.from({ length: steps }, (_, i) => ({
      content: [
        { type: 'text' as const, text: `step ${i}` },
        {
          type: 'tool_use' as const,
          id: `c${i}`,
          name: toolNames[i % toolNames.length] as string,
          input: { query: `q${i}`, limit: i % 7 },
        },
      ],
      stopReason: 'tool_use' as const,
      usage: { inputTokens: 1_000 + 50 * i, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
      model: 'fake',
    })),
    {
      content: [{ type: 'text', text: answer }],
      stopReason: 'end_turn',
      usage: { inputTokens: 1_000 + 50 * steps, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      model: 'fake',
    },
  ];
  const tools = toolNames.map((toolName) =>
    defineTool({
      name: toolName,
      effect: 'read',
      description: `Tool ${toolName}`,
      input: inputSchema,
      scopes: ['read'],
      execute: async ({ query, limit }) => ({ query, limit, rows: [1, 2, 3] }),
    }),
  );
  const peakInput = 1_000 + 50 * steps;
  const billed = (steps + 1) * (peakInput + 40);
  let exporter: InMemorySpanExporter | undefined;
  let provider: BasicTracerProvider | undefined;
  let sink: ReturnType<typeof otelTraceSink> | undefined;
  const batch = name === 'otel-sdk-batch' || name === 'sdk-floor-batch';
  if (name !== 'baseline' && name !== 'otel-noop') {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    exporter = new InMemorySpanExporter();
    // Simple exports each span as it ends (what the brief's bar names); Batch is what NodeSDK uses.
    const processor = batch ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter);
    provider = new BasicTracerProvider({ spanProcessors: [processor] });
    trace.setGlobalTracerProvider(provider);
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new BenchReader()] }));
  }
  if (name === 'sdk-floor' || name === 'sdk-floor-batch') {
    const floorExporter = exporter as InMemorySpanExporter;
    const once = sdkFloor(responses, tools, steps);
    return async () => {
      await once();
      if (batch) await provider?.forceFlush();
      const spans = floorExporter.getFinishedSpans().length;
      if (spans !== 1 + (steps + 1) + steps) throw new Error(`${name}: exported ${spans} spans`);
      floorExporter.reset();
    };
  }
  if (name !== 'baseline') sink = otelTraceSink();
  return async () => {
    let turn = 0;
    const model: Model = { name: 'fake', generate: async () => responses[turn++] as ModelResponse };
    const result = await runAgent({
      model,
      input: 'Check everything.',
      tools,
      actor: { id: 'user-1', scopes: ['read'] },
      maxSteps: steps + 2,
      repeatLimit: 3,
      drift: { window: 8, minDistinct: 3 },
      maxContextTokens: 10 * peakInput,
      maxBilledTokens: 10 * billed,
      maxSpendUsd: (10 * billed * 15) / 1_000_000,
      prices: { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } },
      maxWallMs: 3_600_000,
      maxToolErrors: 10,
      // A fresh memory sink per run, as the baseline's, beside the one OTel sink of the contender.
      ...(sink
        ? { trace: [memoryTraceSink(), sink], wrapToolExecution: sink.wrapToolExecution }
        : { trace: memoryTraceSink() }),
    });
    if (result.outcome.kind !== 'answered' || result.steps !== steps + 1)
      throw new Error(`${name}: ${JSON.stringify(result.outcome)} after ${result.steps} calls`);
    if (exporter) {
      // Inside the timed run: the batch's export is part of what telemetry costs.
      if (batch) await provider?.forceFlush();
      const spans = exporter.getFinishedSpans().length;
      // The agent span, a chat span per model call, an execute_tool span per tool call.
      if (spans !== 1 + (steps + 1) + steps) throw new Error(`${name}: exported ${spans} spans`);
      exporter.reset();
    }
  };
}

/**
 * The SDK calls reins/otel makes for one run of this benchmark (see src/otel/otel-trace-sink.ts and
 * otel-run-metrics.ts), made directly: an `invoke_agent` span under the active context; per model
 * call a `chat` span with its request and response attributes and three metric records; per tool
 * call an `execute_tool` span made active around the tool's own function and a counter add; at the
 * end the outcome event, the run's attributes and three run metrics. No reins run: what is timed is
 * the SDK's own work (and the tools' trivial bodies).
 */
function sdkFloor(
  responses: ModelResponse[],
  tools: ReturnType<typeof defineTool>[],
  steps: number,
): () => Promise<void> {
  const tracer = trace.getTracer('reins');
  const meter = metrics.getMeter('reins');
  const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', { unit: '{token}' });
  const operationDuration = meter.createHistogram('gen_ai.client.operation.duration', { unit: 's' });
  const runsCounter = meter.createCounter('reins.runs', { unit: '{run}' });
  const runCost = meter.createHistogram('reins.run.cost', { unit: 'USD' });
  const runSteps = meter.createHistogram('reins.run.steps', { unit: '{step}' });
  const toolCalls = meter.createCounter('reins.tool.calls', { unit: '{call}' });
  const call: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': '_OTHER',
    'gen_ai.request.model': 'fake',
    'gen_ai.response.model': 'fake',
  };
  const input = { ...call, 'gen_ai.token.type': 'input' };
  const output = { ...call, 'gen_ai.token.type': 'output' };
  const toolMetricAttributes = new Map(
    toolNames.map((toolName) => [toolName, { 'gen_ai.tool.name': toolName, 'reins.tool.status': 'ok' }]),
  );
  let runNumber = 0;
  return async () => {
    const runId = `run_${runNumber++}`;
    let at = Date.now();
    const parent = context.active();
    const agent = tracer.startSpan(
      'invoke_agent reins',
      {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'reins',
          'gen_ai.conversation.id': runId,
          'gen_ai.request.model': 'fake',
          'gen_ai.system': '_OTHER',
          'reins.run.id': runId,
          'reins.run.segment': 0,
          'reins.limits.max_steps': steps + 2,
        },
      },
      parent,
    );
    const agentContext = trace.setSpan(parent, agent);
    let inputTokens = 0;
    let outputTokens = 0;
    for (let step = 0; step <= steps; step++) {
      const response = responses[step] as ModelResponse;
      const usage = response.usage as NonNullable<ModelResponse['usage']>;
      const chat = tracer.startSpan(
        'chat fake',
        {
          kind: SpanKind.CLIENT,
          startTime: at,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.system': '_OTHER',
            'gen_ai.request.model': 'fake',
          },
        },
        agentContext,
      );
      chat.setAttribute('gen_ai.response.finish_reasons', [step < steps ? 'tool_call' : 'stop']);
      chat.setAttribute('reins.step', step + 1);
      chat.setAttribute('reins.cost_usd', 0.003);
      chat.setAttribute('reins.usage_estimated', false);
      chat.setAttribute('gen_ai.response.model', 'fake');
      chat.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
      chat.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
      chat.end(++at);
      operationDuration.record(0, call);
      tokenUsage.record(usage.inputTokens, input);
      tokenUsage.record(usage.outputTokens, output);
      inputTokens += usage.inputTokens;
      outputTokens += usage.outputTokens;
      const use = response.content.find((block) => block.type === 'tool_use');
      if (use?.type !== 'tool_use') continue;
      const tool = tools[step % tools.length] as (typeof tools)[number];
      const span = tracer.startSpan(
        `execute_tool ${use.name}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: at,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': use.name,
            'gen_ai.tool.call.id': use.id,
            'gen_ai.tool.type': 'function',
            'reins.step': step + 1,
          },
        },
        agentContext,
      );
      const execute = tool.execute as (input: unknown, context: unknown) => unknown;
      await context.with(trace.setSpan(agentContext, span), () => execute(use.input, {}));
      span.setAttribute('reins.tool.status', 'ok');
      span.end(++at);
      toolCalls.add(1, toolMetricAttributes.get(use.name) as Attributes);
    }
    agent.addEvent(
      'reins.outcome',
      { 'reins.outcome.kind': 'answered', 'reins.outcome.silent_failure': false },
      at,
    );
    agent.setAttributes({
      'reins.outcome.kind': 'answered',
      'reins.run.steps': steps + 1,
      'reins.run.cost_usd': 0.15,
      'gen_ai.usage.input_tokens': inputTokens,
      'gen_ai.usage.output_tokens': outputTokens,
    });
    agent.end(at);
    const outcome = { 'reins.outcome.kind': 'answered' };
    runsCounter.add(1, { ...outcome, 'reins.outcome.silent_failure': false });
    runCost.record(0.15, outcome);
    runSteps.record(steps + 1, outcome);
  };
}

interface Sample {
  contender: Contender;
  steps: number;
  runs: number;
  /** Wall time per model call. */
  usPerStep: number;
  /** CPU time (user + system) of the child per model call. */
  cpuUsPerStep: number;
  /** Garbage-collection pauses per model call (wall time; part of both figures above). */
  gcUsPerStep: number;
}

async function child(name: Contender, steps: number): Promise<void> {
  const once = contender(name, steps);
  // Warm-up by time, not by count: a contender whose runs are short (the floor) still gets as long.
  const warmupMs = Number(option('warmup-ms') ?? 2_000);
  const timeMs = Number(option('time-ms') ?? 1_000);
  const warmupStarted = performance.now();
  for (let i = 0; i < 5 || performance.now() - warmupStarted < warmupMs; i++) await once();
  let runs = 0;
  let totalMs = 0;
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  // CPU time as well as wall time: on a shared machine the wall clock also counts other processes' turns.
  const cpuBefore = process.cpuUsage();
  while (runs === 0 || totalMs < timeMs) {
    const started = performance.now();
    await once();
    totalMs += performance.now() - started;
    runs++;
  }
  const cpu = process.cpuUsage(cpuBefore);
  // The observer is told of pauses asynchronously: let the last ones arrive.
  await new Promise((resolve) => setTimeout(resolve, 20));
  gc.disconnect();
  const calls = runs * (steps + 1);
  const sample: Sample = {
    contender: name,
    steps,
    runs,
    usPerStep: (totalMs * 1_000) / calls,
    cpuUsPerStep: (cpu.user + cpu.system) / calls,
    gcUsPerStep: (gcMs * 1_000) / calls,
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

function runChild(name: Contender, steps: number): Promise<Sample> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--import', 'tsx', self, '--child', name, '--steps', String(steps)];
  for (const timing of ['warmup-ms', 'time-ms']) {
    const value = option(timing);
    if (value !== undefined) args.push(`--${timing}`, value);
  }
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${name} exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample);
      } catch {
        reject(new Error(`child ${name} printed no result: ${out}`));
      }
    });
  });
}

async function parent(): Promise<void> {
  const rounds = Math.max(5, Number(option('rounds') ?? 5));
  const started = performance.now();
  const steps = Number(option('steps') ?? 50);
  const samples = new Map<Contender, Sample[]>(contenders.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length] as Contender);
    for (const name of order) {
      const sample = await runChild(name, steps);
      samples.get(name)?.push(sample);
      process.stderr.write(
        `  round ${round + 1}/${rounds}  ${name.padEnd(15)} ${sample.usPerStep.toFixed(1).padStart(8)} µs/step wall ${sample.cpuUsPerStep.toFixed(1).padStart(8)} µs/step CPU ${sample.gcUsPerStep.toFixed(1).padStart(7)} µs/step GC\n`,
      );
    }
  }
  const bars: Partial<Record<Contender, number>> = {
    'otel-noop': 0.05,
    'otel-sdk': 0.15,
    'otel-sdk-batch': 0.15,
  };
  const medianOf = (name: Contender, read: (sample: Sample) => number) =>
    median((samples.get(name) ?? []).map(read));
  const wallBase = medianOf('baseline', (sample) => sample.usPerStep);
  const cpuBase = medianOf('baseline', (sample) => sample.cpuUsPerStep);
  const isFloor = (name: Contender) => name === 'sdk-floor' || name === 'sdk-floor-batch';
  const rows = contenders.map((name) => {
    const wall = medianOf(name, (sample) => sample.usPerStep);
    const cpu = medianOf(name, (sample) => sample.cpuUsPerStep);
    const floor = floorOf[name];
    // What is left of the SDK row once reins without telemetry and the SDK's own calls are taken away.
    const own =
      floor === undefined
        ? {}
        : {
            floor,
            ownUsPerStep: wall - wallBase - medianOf(floor, (sample) => sample.usPerStep),
            ownCpuUsPerStep: cpu - cpuBase - medianOf(floor, (sample) => sample.cpuUsPerStep),
          };
    return {
      contender: name,
      label: labels[name],
      usPerStep: wall,
      cpuUsPerStep: cpu,
      gcUsPerStep: medianOf(name, (sample) => sample.gcUsPerStep ?? 0),
      // A floor's "overhead" is the floor as a share of a reins step: what the SDK's calls would add
      // to the run if reins/otel itself cost nothing.
      wallOverhead: isFloor(name) ? wall / wallBase : wall / wallBase - 1,
      cpuOverhead: isFloor(name) ? cpu / cpuBase : cpu / cpuBase - 1,
      ...own,
      ...('ownUsPerStep' in own
        ? {
            ownWallOverhead: (own.ownUsPerStep as number) / wallBase,
            ownCpuOverhead: (own.ownCpuUsPerStep as number) / cpuBase,
          }
        : {}),
      bar: bars[name],
      samples: samples.get(name),
    };
  });
  const percent = (value: number) => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} %`;
  console.log(
    `\nreins/otel overhead on a ${steps}-step run (median of ${rounds} rounds, one child process per cell; µs per model call)`,
  );
  console.log(
    `  ${'contender'.padEnd(46)} ${'wall'.padStart(8)} ${'CPU'.padStart(8)} ${'GC'.padStart(7)}   overhead (wall / CPU)`,
  );
  for (const row of rows) {
    const label = row.label.length > 46 ? `${row.label.slice(0, 45)}…` : row.label.padEnd(46);
    let verdict = '';
    if (isFloor(row.contender))
      verdict = `   the SDK alone: ${percent(row.wallOverhead)} / ${percent(row.cpuOverhead)} of a reins step`;
    else if (row.contender !== 'baseline')
      verdict = `   ${percent(row.wallOverhead)} / ${percent(row.cpuOverhead)}  (bar ≤ ${((row.bar ?? 0) * 100).toFixed(0)} %: ${
        Math.min(row.wallOverhead, row.cpuOverhead) <= (row.bar ?? 0) ? 'met' : 'missed'
      })`;
    if (row.ownWallOverhead !== undefined && row.ownCpuOverhead !== undefined)
      verdict += `; reins/otel's own share over the floor ${percent(row.ownWallOverhead)} / ${percent(row.ownCpuOverhead)}`;
    console.log(
      `  ${label} ${row.usPerStep.toFixed(1).padStart(8)} ${row.cpuUsPerStep.toFixed(1).padStart(8)} ${row.gcUsPerStep.toFixed(1).padStart(7)}${verdict}`,
    );
  }
  const json = option('json');
  if (json)
    writeFileSync(
      json,
      `${JSON.stringify(
        {
          meta: benchMeta({
            rounds,
            steps,
            warmupMs: Number(option('warmup-ms') ?? 2_000),
            timeMs: Number(option('time-ms') ?? 1_000),
            benchSeconds: Math.round((performance.now() - started) / 1_000),
          }),
          rows,
        },
        null,
        2,
      )}\n`,
    );
}

const childIndex = process.argv.indexOf('--child');
if (childIndex >= 0) await child(process.argv[childIndex + 1] as Contender, Number(option('steps')));
else await parent();
