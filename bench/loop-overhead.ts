/**
 * Loop overhead per step: reins with every control on and the trace in memory, against Vercel AI SDK
 * `generateText` (mock model from `ai/test`, `stopWhen: stepCountIs(...)`) and OpenAI Agents JS `run`
 * with a fake model, on the same 50-step trajectory over 10 tools. Models answer from precomputed
 * responses, tools return small objects: what is left is each framework's own work per step.
 *
 *   npm run bench:loop            (or: npx tsx bench/loop-overhead.ts [--rounds 7] [--runs 40])
 */
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
import { defineTool, type Model, type ModelResponse, memoryTraceSink, runAgent } from '../dist/index.js';
import { median, printTable } from './stats.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const rounds = flag('rounds', 7);
const runsPerRound = flag('runs', 40);
const steps = 50;
const toolCount = 10;

setTracingDisabled(true);

const toolNames = Array.from({ length: toolCount }, (_, i) => `tool_${i}`);
const trajectory = Array.from({ length: steps }, (_, i) => ({
  name: toolNames[i % toolCount] as string,
  input: { query: `q${i}`, limit: i % 7 },
}));
const inputSchema = z.object({ query: z.string(), limit: z.number().int() });
const answer = 'All checks done.';
const execute = async ({ query, limit }: { query: string; limit: number }) => ({
  query,
  limit,
  rows: [1, 2, 3],
});

// reins: the same responses every run, precomputed.
const reinsResponses: ModelResponse[] = [
  ...trajectory.map((call, i) => ({
    content: [
      { type: 'text' as const, text: `step ${i}` },
      { type: 'tool_use' as const, id: `c${i}`, name: call.name, input: call.input },
    ],
    stopReason: 'tool_use' as const,
    usage: { inputTokens: 1_000 + 50 * i, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: 'fake',
  })),
  {
    content: [{ type: 'text', text: answer }],
    stopReason: 'end_turn',
    usage: { inputTokens: 3_600, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: 'fake',
  },
];
const reinsTools = toolNames.map((name) =>
  defineTool({
    name,
    effect: 'read',
    description: `Tool ${name}`,
    input: inputSchema,
    scopes: ['read'],
    execute,
  }),
);

async function reinsRun(): Promise<void> {
  let turn = 0;
  const model: Model = { name: 'fake', generate: async () => reinsResponses[turn++] as ModelResponse };
  const result = await runAgent({
    model,
    input: 'Check everything.',
    tools: reinsTools,
    actor: { id: 'user-1', scopes: ['read'] },
    maxSteps: steps + 5,
    repeatLimit: 3,
    drift: { window: 8, minDistinct: 3 },
    maxContextTokens: 1_000_000,
    maxBilledTokens: 10_000_000,
    maxSpendUsd: 100,
    prices: { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } },
    maxWallMs: 60_000,
    maxToolErrors: 10,
    trace: memoryTraceSink(),
  });
  if (result.outcome.kind !== 'answered' || result.steps !== steps + 1)
    throw new Error(`reins: ${JSON.stringify(result.outcome)}`);
}

// Vercel AI SDK 7.
const vercelTools = Object.fromEntries(
  toolNames.map((name) => [name, vercelTool({ description: `Tool ${name}`, inputSchema, execute })]),
);
const vercelResults = [
  ...trajectory.map((call, i) => ({
    content: [
      { type: 'text' as const, text: `step ${i}` },
      {
        type: 'tool-call' as const,
        toolCallId: `c${i}`,
        toolName: call.name,
        input: JSON.stringify(call.input),
      },
    ],
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
    usage: usageV4(1_000 + 50 * i, 30),
    warnings: [],
  })),
  {
    content: [{ type: 'text' as const, text: answer }],
    finishReason: { unified: 'stop' as const, raw: 'end_turn' },
    usage: usageV4(3_600, 10),
    warnings: [],
  },
];
function usageV4(input: number, output: number) {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}
async function vercelRun(): Promise<void> {
  let turn = 0;
  const model = new MockLanguageModelV4({ doGenerate: async () => vercelResults[turn++] as never });
  const result = await generateText({
    model,
    tools: vercelTools,
    stopWhen: stepCountIs(steps + 5),
    prompt: 'Check everything.',
  });
  if (result.text !== answer || result.steps.length !== steps + 1)
    throw new Error(`vercel: ${result.steps.length} steps, ${result.text}`);
}

// OpenAI Agents JS 0.20.
const openaiTools = toolNames.map((name) =>
  openaiTool({ name, description: `Tool ${name}`, parameters: inputSchema, execute }),
);
const openaiResponses: OpenAiModelResponse[] = [
  ...trajectory.map((call, i) => ({
    usage: new Usage({
      requests: 1,
      inputTokens: 1_000 + 50 * i,
      outputTokens: 30,
      totalTokens: 1_030 + 50 * i,
    }),
    output: [
      {
        type: 'message' as const,
        role: 'assistant' as const,
        status: 'completed' as const,
        content: [{ type: 'output_text' as const, text: `step ${i}` }],
      },
      {
        type: 'function_call' as const,
        callId: `c${i}`,
        name: call.name,
        arguments: JSON.stringify(call.input),
        status: 'completed' as const,
      },
    ],
  })),
  {
    usage: new Usage({ requests: 1, inputTokens: 3_600, outputTokens: 10, totalTokens: 3_610 }),
    output: [
      {
        type: 'message' as const,
        role: 'assistant' as const,
        status: 'completed' as const,
        content: [{ type: 'output_text' as const, text: answer }],
      },
    ],
  },
];
async function openaiRun(): Promise<void> {
  let turn = 0;
  const model = {
    getResponse: async () => openaiResponses[turn++] as OpenAiModelResponse,
    getStreamedResponse: () => {
      throw new Error('not used');
    },
  };
  const agent = new Agent({ name: 'bench', instructions: 'Check everything.', tools: openaiTools, model });
  const result = await run(agent, 'Check everything.', { maxTurns: steps + 5 });
  if (result.finalOutput !== answer) throw new Error(`openai: ${String(result.finalOutput)}`);
}

const contenders: [string, () => Promise<void>][] = [
  ['reins (all controls, trace)', reinsRun],
  ['vercel ai generateText', vercelRun],
  ['openai agents run', openaiRun],
];

for (const [, fn] of contenders) for (let i = 0; i < 5; i++) await fn(); // warm up
const samples = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
for (let round = 0; round < rounds; round++) {
  // Interleave contenders within each round so machine noise hits all of them alike.
  for (const [name, fn] of contenders) {
    const started = performance.now();
    for (let i = 0; i < runsPerRound; i++) await fn();
    const perStepUs = ((performance.now() - started) * 1_000) / (runsPerRound * (steps + 1));
    samples.get(name)!.push(perStepUs);
  }
}
const rows = contenders.map(([name]) => ({ name, value: median(samples.get(name)!), unit: 'µs/step' }));
printTable(
  `Loop overhead per step (median of ${rounds} rounds × ${runsPerRound} runs of ${steps + 1} model calls, ${toolCount} tools)`,
  rows,
  'reins (all controls, trace)',
);
const fastestPeer = Math.min(...rows.slice(1).map((row) => row.value));
console.log(`  reins / fastest peer: ${(rows[0]!.value / fastestPeer).toFixed(2)}×`);
if (process.argv.includes('--json'))
  console.log(JSON.stringify(Object.fromEntries(rows.map((row) => [row.name, row.value]))));
