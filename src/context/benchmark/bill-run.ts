import { z } from 'zod';
import type { ModelPrice } from '../../controls/price.js';
import { runAgent } from '../../loop/run-agent.js';
import type { ToolDefinition } from '../../model/model.js';
import { type ScriptedTurn, type ScriptStep, scriptedModel } from '../../testing/scripted-model.js';
import { type CacheBreakpoints, simulatedPromptCache } from '../../testing/simulated-prompt-cache.js';
import { approxTokenEstimator, PrefillCounter } from '../../tokens/token-estimator.js';
import { defineTool } from '../../tools/define-tool.js';
import { contextPolicy } from '../cache-policy.js';
import type { ContextPolicy } from '../context-policy.js';
import type { TranscriptIndex } from '../transcript-index.js';

/** The per-step sizes of a run, in tokens (the seeds' parameters). */
export interface BillWorkload {
  /** System prompt, tool definitions and the task: the part a provider cache can hold. */
  stablePrefixTokens: number;
  /** What the model emits per step (its turn: reasoning and the tool call). */
  outputTokens: number;
  /** The tool result each step appends. */
  resultTokens: number;
}

/** post-18: ~1,500 tokens a step (a model turn and a tool result), on the bill cross-post's 4,000-token stable prefix. */
export const post18Workload: BillWorkload = {
  stablePrefixTokens: 4_000,
  outputTokens: 300,
  resultTokens: 1_200,
};

/** The bill cross-post: SYS 4,000, OUT 300, RESULT 500. */
export const billCrossPostWorkload: BillWorkload = {
  stablePrefixTokens: 4_000,
  outputTokens: 300,
  resultTokens: 500,
};

/** The bill cross-post's rates: $3 / $15 per million, cache writes 1.25×, cache reads 0.1×. */
export const crossPostPrice: ModelPrice = {
  inputUsdPerMillionTokens: 3,
  outputUsdPerMillionTokens: 15,
  cacheWriteUsdPerMillionTokens: 3.75,
  cacheReadUsdPerMillionTokens: 0.3,
};

/** post-18's working set: "cache = ContextCache(budget=8000, …)". */
export const post18BudgetTokens = 8_000;

/** How a bill run treats its window and its prefix. */
export type BillPolicy = 'append-only' | 'caching-only' | 'cache-policy' | 'cache-policy+retrieval';

export interface BillRunOptions {
  workload: BillWorkload;
  policy: BillPolicy;
  /** Model calls: `steps - 1` tool steps, then the answer (the cross-posts' N). */
  steps: number;
  /** For every policy but append-only. @default 'stable-prefix' */
  breakpoints?: CacheBreakpoints;
  /** @default post18BudgetTokens */
  budgetTokens?: number;
  /** The transcript index for `cache-policy+retrieval`. */
  index?: (runId: string) => TranscriptIndex;
}

export interface BillRunResult {
  policy: BillPolicy;
  steps: number;
  billedTokens: number;
  costUsd: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** The prefill of the last call: the window at the end of the run. */
  lastPrefillTokens: number;
}

const chars = (tokens: number) => tokens * 4;
const task = 'Survey every area of the service and report what you find.';

/** Words that name nothing a digest would keep as an id (no digits, no capitals). */
const filler =
  'the probe read the area and found the usual mix of healthy and slow handlers with nothing alarming in the logs ';

function sized(prefix: string, tokens: number): string {
  const length = chars(tokens);
  let text = prefix;
  while (text.length < length) text += filler;
  return text.slice(0, length);
}

const probe = defineTool({
  name: 'probe',
  description: 'Read one area of the service.',
  input: z.object({ area: z.string() }),
  effect: 'read',
  // The bench's own tool: its output is not delimited, so a result is exactly its size.
  trustedOutput: true,
  execute: ({ area }, context) => sized(`${area}: `, resultTokensOf(context.runId)),
});

// The result size of each running workload, by run id (a tool cannot close over a run's options).
const resultSizes = new Map<string, number>();
const resultTokensOf = (runId: string) => resultSizes.get(runId) ?? 1;
let runs = 0;

/** The tool definitions the loop sends for `probe` (and a policy's tools), sized as the scripted model sizes them. */
async function toolsTokens(policy: ContextPolicy | undefined): Promise<number> {
  let tools: readonly ToolDefinition[] = [];
  await runAgent({
    model: scriptedModel([
      (request) => {
        tools = request.tools;
        return { text: 'ok' };
      },
    ]),
    input: task,
    tools: [probe],
    giveUpTool: false,
    ...(policy ? { context: policy } : {}),
  });
  return tools.length === 0 ? 0 : approxTokenEstimator.countText(JSON.stringify(tools));
}

/**
 * One run of the bill benchmark through the real loop: a scripted model calls `probe` on a new
 * area every step and answers at the last call; every message is sized to the workload exactly
 * (four characters a token, the estimator the loop and the scripted model share). Usage is what a
 * provider with {@link simulatedPromptCache} would report, priced at the cross-post's rates.
 */
export async function billRun(options: BillRunOptions): Promise<BillRunResult> {
  const { workload, steps } = options;
  const runId = `bill-${++runs}`;
  resultSizes.set(runId, workload.resultTokens);
  const policy = policyFor(options);
  // The system prompt is the same in every configuration: the stable prefix less probe's definition
  // and the task. A policy's own tool (recall) is on top of it, as it would be.
  const probeTokens = await toolsTokens(undefined);
  const taskTokens = approxTokenEstimator.countText(task);
  const system = sized(
    'You are a careful site-reliability agent. ',
    workload.stablePrefixTokens - probeTokens - taskTokens,
  );
  const cache =
    options.policy === 'append-only'
      ? undefined
      : simulatedPromptCache({ breakpoints: options.breakpoints ?? 'stable-prefix' });
  const prefill = new PrefillCounter(approxTokenEstimator);
  let lastPrefill = 0;
  const script: ScriptStep[] = [];
  for (let k = 1; k <= steps; k++) {
    const final = k === steps;
    script.push((request) => {
      const usage = cache?.bill(request);
      const turn = final ? answerTurn(workload) : probeTurn(workload, k);
      lastPrefill = prefill.request(request);
      return usage ? { ...turn, usage } : turn;
    });
  }
  const model = scriptedModel(script, { recordCalls: false });
  try {
    const run = await runAgent({
      model,
      input: task,
      system,
      tools: [probe],
      giveUpTool: false,
      maxSteps: steps + 2,
      repeatLimit: false,
      drift: false,
      maxContextTokens: 1_000_000_000,
      prices: { '*': crossPostPrice },
      runId,
      ...(policy ? { context: policy } : {}),
    });
    if (run.outcome.kind !== 'answered' || run.steps !== steps)
      throw new Error(`bill run ${options.policy} ${steps}: ${run.outcome.kind} after ${run.steps} calls`);
    const usage = run.usage;
    return {
      policy: options.policy,
      steps,
      billedTokens: run.billedTokens,
      costUsd: run.costUsd,
      inputTokens: usage.inputTokens,
      cacheReadTokens: usage.cacheReadTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      outputTokens: usage.outputTokens,
      lastPrefillTokens: lastPrefill,
    };
  } finally {
    resultSizes.delete(runId);
  }
}

function policyFor(options: BillRunOptions): ContextPolicy | undefined {
  const budgetTokens = options.budgetTokens ?? post18BudgetTokens;
  if (options.policy === 'cache-policy') return contextPolicy({ budgetTokens, compaction: 'summarize' });
  if (options.policy === 'cache-policy+retrieval') {
    if (!options.index) throw new Error('cache-policy+retrieval needs an index');
    return contextPolicy({ budgetTokens, compaction: 'retrieve', retrieval: { index: options.index } });
  }
  return undefined;
}

function probeTurn(workload: BillWorkload, k: number): ScriptedTurn {
  const input = { area: `area-${k}` };
  const callTokens = approxTokenEstimator.countText(`probe${JSON.stringify(input)}`);
  return {
    text: sized(`Step ${k}: the next area to read is area ${k}; `, workload.outputTokens - callTokens),
    toolCalls: [{ name: 'probe', input }],
  };
}

function answerTurn(workload: BillWorkload): ScriptedTurn {
  return { text: sized('Every area is read; the report follows. ', workload.outputTokens) };
}
