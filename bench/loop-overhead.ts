/**
 * Loop overhead per step, as a curve over run length: reins with every control on and the trace in
 * memory, against Vercel AI SDK `generateText` (mock model from `ai/test`, `stopWhen`) and OpenAI
 * Agents JS `run` with a fake model, on the same trajectory over 10 tools at 10 / 50 / 200 / 1,000
 * steps. Models answer from precomputed responses and tools return small objects, so what is left is
 * each framework's own work per step. reins's model converts every request to the Anthropic Messages
 * API's parameters (`anthropicParams`, what the real adapter sends), so it does the message
 * conversion a real adapter does; `reins (loop only)` skips it, to show the loop by itself.
 *
 * Method: one fresh child process per (contender, steps) cell, so no contender's garbage or JIT
 * state slows another; cells run one at a time, interleaved and rotated across rounds; the figure is
 * the median over rounds (≥ 5). A child warms up on shorter runs, then times runs for about a second
 * (at least one), and exits non-zero unless every run answered after steps + 1 model calls. Heap
 * allocated per step is measured in the child for every contender (v8.GCProfiler: Δ used heap + what
 * each GC freed).
 *
 *   npm run bench:loop   (or: npx tsx bench/loop-overhead.ts [--rounds 5] [--steps 10,50,200,1000]
 *                         [--only reins,vercel,...] [--json FILE])
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GCProfiler } from 'node:v8';
import {
  Agent,
  type ModelResponse as OpenAiModelResponse,
  tool as openaiTool,
  run,
  setTracingDisabled,
  Usage,
} from '@openai/agents';
import { generateText, stepCountIs, tool as vercelTool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { anthropicParams } from '../dist/anthropic/index.js';
import { defineTool, type Model, type ModelResponse, memoryTraceSink, runAgent } from '../dist/index.js';
import { benchMeta, median, numberList, option } from './stats.js';

const contenders = ['reins', 'reins-loop', 'vercel', 'openai'] as const;
type Contender = (typeof contenders)[number];
const labels: Record<Contender, string> = {
  reins: 'reins (all controls, trace, adapter conversion)',
  'reins-loop': 'reins (loop only: no adapter conversion)',
  vercel: 'Vercel AI SDK generateText',
  openai: 'OpenAI Agents JS run',
};
const toolCount = 10;
const toolNames = Array.from({ length: toolCount }, (_, i) => `tool_${i}`);
const inputSchema = z.object({ query: z.string(), limit: z.number().int() });
const answer = 'All checks done.';
const execute = async ({ query, limit }: { query: string; limit: number }) => ({
  query,
  limit,
  rows: [1, 2, 3],
});
const inputOf = (i: number) => ({ query: `q${i}`, limit: i % 7 });

// ------------------------------------------------------------------------------------ contenders
/** Builds one contender's run of `steps` tool steps plus the answer; the run throws if it went wrong. */
function contender(name: Contender, steps: number): () => Promise<void> {
  if (name === 'reins' || name === 'reins-loop') return reinsRun(steps, name === 'reins');
  if (name === 'vercel') return vercelRun(steps);
  return openaiRun(steps);
}

function reinsRun(steps: number, convert: boolean): () => Promise<void> {
  const responses: ModelResponse[] = [
    ...Array.from({ length: steps }, (_, i) => ({
      content: [
        { type: 'text' as const, text: `step ${i}` },
        {
          type: 'tool_use' as const,
          id: `c${i}`,
          name: toolNames[i % toolCount] as string,
          input: inputOf(i),
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
  const tools = toolNames.map((name) =>
    defineTool({
      name,
      effect: 'read',
      description: `Tool ${name}`,
      input: inputSchema,
      scopes: ['read'],
      execute,
    }),
  );
  const peakInput = 1_000 + 50 * steps;
  const billed = (steps + 1) * (peakInput + 40);
  let sent = 0;
  return async () => {
    let turn = 0;
    const model: Model = {
      name: 'fake',
      generate: async (request) => {
        // What the Anthropic adapter builds before it sends: messages, tools, system, settings.
        if (convert) sent += anthropicParams(request, { model: 'fake' }).messages.length;
        return responses[turn++] as ModelResponse;
      },
    };
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
      trace: memoryTraceSink(),
    });
    if (result.outcome.kind !== 'answered' || result.steps !== steps + 1)
      throw new Error(`reins: ${JSON.stringify(result.outcome)} after ${result.steps} calls`);
    if (convert && sent === 0) throw new Error('reins: the adapter conversion never ran');
  };
}

function usageV4(input: number, output: number) {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

function vercelRun(steps: number): () => Promise<void> {
  const tools = Object.fromEntries(
    toolNames.map((name) => [name, vercelTool({ description: `Tool ${name}`, inputSchema, execute })]),
  );
  const results = [
    ...Array.from({ length: steps }, (_, i) => ({
      content: [
        { type: 'text' as const, text: `step ${i}` },
        {
          type: 'tool-call' as const,
          toolCallId: `c${i}`,
          toolName: toolNames[i % toolCount] as string,
          input: JSON.stringify(inputOf(i)),
        },
      ],
      finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
      usage: usageV4(1_000 + 50 * i, 30),
      warnings: [],
    })),
    {
      content: [{ type: 'text' as const, text: answer }],
      finishReason: { unified: 'stop' as const, raw: 'end_turn' },
      usage: usageV4(1_000 + 50 * steps, 10),
      warnings: [],
    },
  ];
  return async () => {
    let turn = 0;
    const model = new MockLanguageModelV4({ doGenerate: async () => results[turn++] as never });
    const result = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(steps + 5),
      prompt: 'Check everything.',
    });
    if (result.text !== answer || result.steps.length !== steps + 1)
      throw new Error(`vercel: ${result.steps.length} steps, ${result.text}`);
  };
}

function openaiRun(steps: number): () => Promise<void> {
  setTracingDisabled(true);
  const tools = toolNames.map((name) =>
    openaiTool({ name, description: `Tool ${name}`, parameters: inputSchema, execute }),
  );
  const message = (text: string) => ({
    type: 'message' as const,
    role: 'assistant' as const,
    status: 'completed' as const,
    content: [{ type: 'output_text' as const, text }],
  });
  const responses: OpenAiModelResponse[] = [
    ...Array.from({ length: steps }, (_, i) => ({
      usage: new Usage({
        requests: 1,
        inputTokens: 1_000 + 50 * i,
        outputTokens: 30,
        totalTokens: 1_030 + 50 * i,
      }),
      output: [
        message(`step ${i}`),
        {
          type: 'function_call' as const,
          callId: `c${i}`,
          name: toolNames[i % toolCount] as string,
          arguments: JSON.stringify(inputOf(i)),
          status: 'completed' as const,
        },
      ],
    })),
    {
      usage: new Usage({
        requests: 1,
        inputTokens: 1_000 + 50 * steps,
        outputTokens: 10,
        totalTokens: 1_010 + 50 * steps,
      }),
      output: [message(answer)],
    },
  ];
  return async () => {
    let turn = 0;
    const model = {
      getResponse: async () => responses[turn++] as OpenAiModelResponse,
      getStreamedResponse: () => {
        throw new Error('not used');
      },
    };
    const agent = new Agent({ name: 'bench', instructions: 'Check everything.', tools, model });
    const result = await run(agent, 'Check everything.', { maxTurns: steps + 5 });
    if (result.finalOutput !== answer || turn !== steps + 1)
      throw new Error(`openai: ${String(result.finalOutput)} after ${turn} calls`);
  };
}

// ----------------------------------------------------------------------------------------- child
interface Sample {
  contender: Contender;
  steps: number;
  runs: number;
  usPerStep: number;
  allocBytesPerStep: number;
}

async function child(name: Contender, steps: number): Promise<void> {
  // Warm up on runs of at most 200 steps (the JIT does not need the full length), ≥ 2,000 steps in all.
  const warmSteps = Math.min(steps, 200);
  const warm = contender(name, warmSteps);
  for (let i = 0; i < Math.max(3, Math.ceil(2_000 / warmSteps)); i++) await warm();
  const once = contender(name, steps);
  // The full length once untimed too, when that is cheap (a 1,000-step peer run takes tens of seconds).
  if (steps <= 200) await once();
  // No forced GC before timing (a full GC shrinks the young generation and the next runs pay for
  // it); allocation is what the GC profiler saw freed plus the growth of the used heap.
  let runs = 0;
  let totalMs = 0;
  const profiler = new GCProfiler();
  const heapBefore = process.memoryUsage().heapUsed;
  profiler.start();
  // About a second of runs, at least one, at most 200.
  while (runs < 200 && (runs === 0 || totalMs < 1_000)) {
    const started = performance.now();
    await once();
    totalMs += performance.now() - started;
    runs++;
  }
  const heapAfter = process.memoryUsage().heapUsed;
  const report = profiler.stop();
  let freed = 0;
  for (const event of report?.statistics ?? [])
    freed += event.beforeGC.heapStatistics.usedHeapSize - event.afterGC.heapStatistics.usedHeapSize;
  const calls = runs * (steps + 1);
  const sample: Sample = {
    contender: name,
    steps,
    runs,
    usPerStep: (totalMs * 1_000) / calls,
    allocBytesPerStep: (heapAfter - heapBefore + freed) / calls,
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

// ---------------------------------------------------------------------------------------- parent
function runChild(name: Contender, steps: number): Promise<Sample> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', '--import', 'tsx', self, '--child', name, '--steps', String(steps)];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${name} ${steps} steps exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample);
      } catch {
        reject(new Error(`child ${name} ${steps} steps printed no result: ${out}`));
      }
    });
  });
}

async function parent(): Promise<void> {
  const rounds = Number(option('rounds') ?? 5);
  const stepsList = numberList(option('steps')) ?? [10, 50, 200, 1_000];
  const only = option('only')?.split(',') as Contender[] | undefined;
  const names = contenders.filter((name) => only === undefined || only.includes(name));
  const cells = names.flatMap((name) => stepsList.map((steps) => ({ name, steps })));
  const samples = new Map<string, Sample[]>(cells.map((cell) => [`${cell.name}@${cell.steps}`, []]));
  const started = performance.now();
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round so no cell always runs first or after the same neighbour.
    const order = cells.map((_, i) => cells[(i + round * 3) % cells.length] as (typeof cells)[number]);
    for (const cell of order) {
      const sample = await runChild(cell.name, cell.steps);
      samples.get(`${cell.name}@${cell.steps}`)?.push(sample);
      process.stderr.write(
        `  round ${round + 1}/${rounds}  ${cell.name.padEnd(10)} ${String(cell.steps).padStart(5)} steps  ${sample.usPerStep.toFixed(1).padStart(9)} µs/step  (${((performance.now() - started) / 1_000).toFixed(0)} s)\n`,
      );
    }
  }
  const rows = cells.map(({ name, steps }) => {
    const list = samples.get(`${name}@${steps}`) ?? [];
    const values = list.map((sample) => sample.usPerStep);
    return {
      contender: name,
      label: labels[name],
      steps,
      rounds: list.length,
      usPerStep: median(values),
      min: Math.min(...values),
      max: Math.max(...values),
      allocBytesPerStep: median(list.map((sample) => sample.allocBytesPerStep)),
    };
  });
  const reinsAt = (steps: number) =>
    rows.find((row) => row.contender === 'reins' && row.steps === steps)?.usPerStep;
  const table = rows.map((row) => {
    const base = reinsAt(row.steps);
    return { ...row, ratioToReins: base === undefined ? undefined : row.usPerStep / base };
  });

  console.log(
    `\nLoop cost per step by run length (median of ${rounds} rounds, one child process per cell; µs per model call, ${toolCount} tools)`,
  );
  const header = ['contender', ...stepsList.map((steps) => `${steps.toLocaleString('en-US')} steps`)];
  console.log(
    `  ${header[0]?.padEnd(48)}${header
      .slice(1)
      .map((cell) => cell.padStart(20))
      .join('')}`,
  );
  for (const name of names) {
    const cellsOf = stepsList.map((steps) => {
      const row = table.find((entry) => entry.contender === name && entry.steps === steps);
      if (!row) return '';
      const ratio = row.ratioToReins === undefined ? '' : ` (${row.ratioToReins.toFixed(2)}×)`;
      return `${row.usPerStep.toFixed(1)}${ratio}`;
    });
    console.log(`  ${labels[name].padEnd(48)}${cellsOf.map((cell) => cell.padStart(20)).join('')}`);
  }
  console.log('  (×: ratio to reins with adapter conversion at the same length)');
  const alloc = table.find((row) => row.contender === 'reins' && row.steps === 50);
  if (alloc)
    console.log(`  reins allocates ${(alloc.allocBytesPerStep / 1024).toFixed(1)} KiB per step at 50 steps`);
  const json = option('json');
  if (json) writeFileSync(json, `${JSON.stringify({ meta: benchMeta({ rounds }), rows: table }, null, 2)}\n`);
}

const childIndex = process.argv.indexOf('--child');
if (childIndex >= 0) await child(process.argv[childIndex + 1] as Contender, Number(option('steps')));
else await parent();
