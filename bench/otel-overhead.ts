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
 * Method as in loop-overhead.ts: one fresh child process per (contender, round), rotated across
 * rounds; each child warms up, then times runs for about a second; the figure is the median over
 * rounds (≥ 5). Children fail unless every run answered after steps + 1 model calls (and, with the
 * SDK, exported one span per model call and tool call plus the agent span).
 *
 *   npx tsx bench/otel-overhead.ts [--rounds 5] [--steps 50] [--json FILE]   (after npm run build)
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { context, metrics, trace } from '@opentelemetry/api';
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

const contenders = ['baseline', 'otel-noop', 'otel-sdk', 'otel-sdk-batch'] as const;
type Contender = (typeof contenders)[number];
const labels: Record<Contender, string> = {
  baseline: 'reins, no telemetry',
  'otel-noop': 'reins + reins/otel, no-op API',
  'otel-sdk': 'reins + reins/otel, SDK + in-memory exporter',
  'otel-sdk-batch': 'the same, BatchSpanProcessor (flushed each run)',
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
  if (name === 'otel-sdk' || name === 'otel-sdk-batch') {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    exporter = new InMemorySpanExporter();
    // Simple exports each span as it ends (what the brief's bar names); Batch is what NodeSDK uses.
    const processor =
      name === 'otel-sdk-batch' ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter);
    provider = new BasicTracerProvider({ spanProcessors: [processor] });
    trace.setGlobalTracerProvider(provider);
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new BenchReader()] }));
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
      if (name === 'otel-sdk-batch') await provider?.forceFlush();
      const spans = exporter.getFinishedSpans().length;
      // The agent span, a chat span per model call, an execute_tool span per tool call.
      if (spans !== 1 + (steps + 1) + steps) throw new Error(`${name}: exported ${spans} spans`);
      exporter.reset();
    }
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
}

async function child(name: Contender, steps: number): Promise<void> {
  const once = contender(name, steps);
  for (let i = 0; i < Math.max(5, Math.ceil(2_000 / steps)); i++) await once();
  let runs = 0;
  let totalMs = 0;
  // CPU time as well as wall time: on a shared machine the wall clock also counts other processes' turns.
  const cpuBefore = process.cpuUsage();
  while (runs < 500 && (runs === 0 || totalMs < 1_000)) {
    const started = performance.now();
    await once();
    totalMs += performance.now() - started;
    runs++;
  }
  const cpu = process.cpuUsage(cpuBefore);
  const calls = runs * (steps + 1);
  const sample: Sample = {
    contender: name,
    steps,
    runs,
    usPerStep: (totalMs * 1_000) / calls,
    cpuUsPerStep: (cpu.user + cpu.system) / calls,
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

function runChild(name: Contender, steps: number): Promise<Sample> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--import', 'tsx', self, '--child', name, '--steps', String(steps)];
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
  const steps = Number(option('steps') ?? 50);
  const samples = new Map<Contender, Sample[]>(contenders.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length] as Contender);
    for (const name of order) {
      const sample = await runChild(name, steps);
      samples.get(name)?.push(sample);
      process.stderr.write(
        `  round ${round + 1}/${rounds}  ${name.padEnd(10)} ${sample.usPerStep.toFixed(1).padStart(8)} µs/step wall ${sample.cpuUsPerStep.toFixed(1).padStart(8)} µs/step CPU\n`,
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
  const rows = contenders.map((name) => {
    const wall = medianOf(name, (sample) => sample.usPerStep);
    const cpu = medianOf(name, (sample) => sample.cpuUsPerStep);
    return {
      contender: name,
      label: labels[name],
      usPerStep: wall,
      cpuUsPerStep: cpu,
      wallOverhead: wall / wallBase - 1,
      cpuOverhead: cpu / cpuBase - 1,
      bar: bars[name],
      samples: samples.get(name),
    };
  });
  const percent = (value: number) => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} %`;
  console.log(
    `\nreins/otel overhead on a ${steps}-step run (median of ${rounds} rounds, one child process per cell; µs per model call)`,
  );
  console.log(
    `  ${'contender'.padEnd(46)} ${'wall'.padStart(8)} ${'CPU'.padStart(8)}   overhead (wall / CPU)`,
  );
  for (const row of rows)
    console.log(
      `  ${row.label.padEnd(46)} ${row.usPerStep.toFixed(1).padStart(8)} ${row.cpuUsPerStep.toFixed(1).padStart(8)}${
        row.contender === 'baseline'
          ? ''
          : `   ${percent(row.wallOverhead)} / ${percent(row.cpuOverhead)}  (bar ≤ ${((row.bar ?? 0) * 100).toFixed(0)} %: ${
              Math.min(row.wallOverhead, row.cpuOverhead) <= (row.bar ?? 0) ? 'met' : 'missed'
            })`
      }`,
    );
  const json = option('json');
  if (json) writeFileSync(json, `${JSON.stringify({ meta: benchMeta({ rounds, steps }), rows }, null, 2)}\n`);
}

const childIndex = process.argv.indexOf('--child');
if (childIndex >= 0) await child(process.argv[childIndex + 1] as Contender, Number(option('steps')));
else await parent();
