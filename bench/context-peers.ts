/**
 * The needle harness against the peers' context strategies, one contender per process (spawned by
 * bench/context.ts with `--child NAME`; prints one JSON line). The same plans, the same scripted
 * agent (it decides from the lines its window shows), the same scorer as the reins policies; each
 * peer's strategy is applied, before every model call, to the conversation in its own message
 * format, at the same budget: the reins budget less the system prompt and the tools, which none of
 * them counts (their windows are the conversation's messages).
 *
 * - LangChain `trimMessages` (@langchain/core): strategy 'last', LangChain's own
 *   `countTokensApproximately`, `startOn` a human or AI message (a window may not open on a tool
 *   result), no partial messages.
 * - LangChain `summarizationMiddleware` (langchain): its `beforeModel` hook called as the agent node
 *   calls it, trigger at the budget, its defaults otherwise (keep the last 20 messages, summarize at
 *   most the last 4,000 tokens of what leaves). The summarizer is a scripted chat model
 *   (`SimpleChatModel` from @langchain/core), two ways: one that keeps every planted fact its prompt
 *   shows (an upper bound for the pipeline; also run with `trimTokensToSummarize` raised to the
 *   budget, to show what the default 4,000-token trim costs), and post-11's summary that keeps each old fact with
 *   probability RETAIN = 0.30, decided once per fact.
 * - LangChain `ClearToolUsesEdit` (the context-editing middleware's edit): trigger at the budget,
 *   keep the last 3 tool results (its default), placeholder `[cleared]`; applied to each request.
 * - Vercel AI SDK `pruneMessages` (ai 7): it has no budget of its own (the trigger is left to the
 *   caller); over the budget by `JSON.stringify(messages).length / 4` (the "length/4"), tool
 *   calls and results are pruned before the last N messages, N the largest that fits.
 */
import { SimpleChatModel } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import { type ModelMessage, pruneMessages } from 'ai';
import { ClearToolUsesEdit, countTokensApproximately, summarizationMiddleware } from 'langchain';
import {
  NeedleAgent,
  type NeedlePlan,
  type NeedleRunResult,
  needleBudgetTokens,
  needleParameters,
  needlePlan,
  type PlantedFact,
  recallRow,
  recallScore,
  shows,
  stepCall,
  stepNarration,
  stepResult,
} from '../dist/context/benchmark/index.js';
import { approxTokenEstimator } from '../dist/index.js';
import { seededRandom } from '../dist/testing/index.js';

export const peerContenders = [
  'langchain-trim',
  'langchain-summarization-ideal',
  'langchain-summarization-ideal-untrimmed',
  'langchain-summarization-retain-0.30',
  'langchain-clear-tool-uses',
  'vercel-prune',
] as const;
export type PeerContender = (typeof peerContenders)[number];

export const peerLabels: Record<PeerContender, string> = {
  'langchain-trim': "LangChain trimMessages (strategy 'last')",
  'langchain-summarization-ideal':
    'LangChain summarizationMiddleware, summarizer keeps every fact it is shown',
  'langchain-summarization-ideal-untrimmed':
    'LangChain summarizationMiddleware, same summarizer, trimTokensToSummarize raised to the budget',
  'langchain-summarization-retain-0.30':
    "LangChain summarizationMiddleware, post-11's RETAIN 0.30 summarizer",
  'langchain-clear-tool-uses': 'LangChain ClearToolUsesEdit (context editing, keep 3)',
  'vercel-prune': 'Vercel AI SDK pruneMessages (before-last-N, N fits the budget)',
};

/** The peers count the conversation only: the reins budget less the system prompt and the tools. */
export const peerBudgetTokens = needleBudgetTokens - needleParameters.stablePrefixTokens;

interface Call {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** A conversation in one framework's message format, and its strategy. */
interface Peer<M> {
  user(text: string): M;
  assistant(text: string, calls: Call[]): M;
  result(call: Call, text: string, failed: boolean): M;
  /** Before a call: what is sent, and what the conversation is from now on (a summary replaces it). */
  prepare(history: M[]): Promise<{ sent: M[]; history: M[] }>;
  lines(messages: M[]): string[];
}

const split = (text: string) => text.split('\n');

// ------------------------------------------------------------------------------------- LangChain
function langchainLines(messages: BaseMessage[]): string[] {
  const lines: string[] = [];
  for (const message of messages) {
    const content =
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part) => ('text' in part ? String(part.text) : '')).join('\n');
    lines.push(...split(content));
    if (AIMessage.isInstance(message))
      for (const call of message.tool_calls ?? []) lines.push(`${call.name}(${JSON.stringify(call.args)})`);
  }
  return lines;
}

const langchainFormat = {
  user: (text: string) => new HumanMessage(text),
  assistant: (text: string, calls: Call[]) =>
    new AIMessage({
      content: text,
      tool_calls: calls.map((call) => ({
        id: call.id,
        name: call.name,
        args: call.input,
        type: 'tool_call' as const,
      })),
    }),
  result: (call: Call, text: string, failed: boolean) =>
    new ToolMessage({
      content: text,
      tool_call_id: call.id,
      name: call.name,
      status: failed ? 'error' : 'success',
    }),
  lines: langchainLines,
};

function langchainTrim(): Peer<BaseMessage> {
  return {
    ...langchainFormat,
    prepare: async (history) => {
      const sent = await trimMessages(history, {
        maxTokens: peerBudgetTokens,
        strategy: 'last',
        tokenCounter: (messages: BaseMessage[]) => countTokensApproximately(messages),
        startOn: ['human', 'ai'],
        allowPartial: false,
      });
      return { sent, history };
    },
  };
}

/** A scripted summarizer: it reads its prompt and writes down the planted facts it keeps. */
class ScriptedSummarizer extends SimpleChatModel {
  readonly #facts: readonly PlantedFact[];
  readonly #keep: (fact: PlantedFact) => boolean;
  calls = 0;

  constructor(facts: readonly PlantedFact[], keep: (fact: PlantedFact) => boolean) {
    super({});
    this.#facts = facts;
    this.#keep = keep;
  }

  _llmType(): string {
    return 'scripted-summarizer';
  }

  async _call(messages: BaseMessage[]): Promise<string> {
    this.calls++;
    const prompt = langchainLines(messages);
    const kept: string[] = [];
    for (const fact of this.#facts)
      if (shows(prompt, fact) && this.#keep(fact))
        kept.push(prompt.find((line) => fact.needles.every((needle) => line.includes(needle))) as string);
    return kept.length === 0 ? 'Work is in progress; nothing to carry over.' : kept.join('\n');
  }
}

function langchainSummarization(
  plan: NeedlePlan,
  retain: number | undefined,
  trimTokensToSummarize?: number,
): Peer<BaseMessage> {
  // post-11: each old fact is kept with probability RETAIN, decided once, then carried.
  const random = seededRandom(plan.seed * 7_919);
  const decided = new Map<PlantedFact, boolean>();
  const keep = (fact: PlantedFact) => {
    if (retain === undefined) return true;
    let kept = decided.get(fact);
    if (kept === undefined) {
      kept = random() < retain;
      decided.set(fact, kept);
    }
    return kept;
  };
  const model = new ScriptedSummarizer(plan.facts, keep);
  // Its options type infers as never under this TypeScript (a zod v3/v4 interop type); the runtime
  // schema checks them.
  const middleware = summarizationMiddleware({
    model,
    trigger: { tokens: peerBudgetTokens },
    ...(trimTokensToSummarize ? { trimTokensToSummarize } : {}),
  } as never);
  const beforeModel = middleware.beforeModel as unknown as (
    state: { messages: BaseMessage[] },
    runtime: { context: Record<string, unknown> },
  ) => Promise<{ messages: BaseMessage[] } | undefined>;
  return {
    ...langchainFormat,
    prepare: async (history) => {
      const update = await beforeModel({ messages: history }, { context: {} });
      // The update is [RemoveMessage(REMOVE_ALL), summary, ...kept]: the new state.
      const next = update ? update.messages.slice(1) : history;
      return { sent: next, history: next };
    },
  };
}

function langchainClearToolUses(): Peer<BaseMessage> {
  const edit = new ClearToolUsesEdit({ trigger: { tokens: peerBudgetTokens } });
  return {
    ...langchainFormat,
    prepare: async (history) => {
      // The middleware edits each request's messages; the state keeps every result.
      const sent = [...history];
      await edit.apply({
        messages: sent,
        model: undefined as never,
        countTokens: (messages: BaseMessage[]) => countTokensApproximately(messages),
      });
      return { sent, history };
    },
  };
}

// ---------------------------------------------------------------------------------------- Vercel
function vercelLines(messages: ModelMessage[]): string[] {
  const lines: string[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') {
      lines.push(...split(message.content));
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text') lines.push(...split(part.text));
      else if (part.type === 'tool-call') lines.push(`${part.toolName}(${JSON.stringify(part.input)})`);
      else if (part.type === 'tool-result') {
        const output = part.output;
        if (output.type === 'text' || output.type === 'error-text') lines.push(...split(output.value));
      }
    }
  }
  return lines;
}

const lengthOver4 = (messages: ModelMessage[]) => JSON.stringify(messages).length / 4;

function vercelPrune(): Peer<ModelMessage> {
  return {
    user: (text) => ({ role: 'user', content: text }),
    assistant: (text, calls) => ({
      role: 'assistant',
      content: [
        { type: 'text', text },
        ...calls.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.id,
          toolName: call.name,
          input: call.input,
        })),
      ],
    }),
    result: (call, text, failed) => ({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: call.id,
          toolName: call.name,
          output: failed ? { type: 'error-text', value: text } : { type: 'text', value: text },
        },
      ],
    }),
    prepare: async (history) => {
      if (lengthOver4(history) <= peerBudgetTokens) return { sent: history, history };
      // The largest N whose pruned conversation fits (fewer kept messages never make it larger).
      let low = 0;
      let high = history.length;
      while (low < high) {
        const n = Math.ceil((low + high) / 2);
        const pruned = pruneMessages({ messages: history, toolCalls: `before-last-${n}-messages` as never });
        if (lengthOver4(pruned) <= peerBudgetTokens) low = n;
        else high = n - 1;
      }
      const sent =
        low === 0
          ? pruneMessages({ messages: history, toolCalls: 'all' })
          : pruneMessages({ messages: history, toolCalls: `before-last-${low}-messages` as never });
      return { sent, history };
    },
    lines: vercelLines,
  };
}

// --------------------------------------------------------------------------------------- harness
function peerFor(name: PeerContender, plan: NeedlePlan): Peer<unknown> {
  switch (name) {
    case 'langchain-trim':
      return langchainTrim() as Peer<unknown>;
    case 'langchain-summarization-ideal':
      return langchainSummarization(plan, undefined) as Peer<unknown>;
    case 'langchain-summarization-ideal-untrimmed':
      return langchainSummarization(plan, undefined, peerBudgetTokens) as Peer<unknown>;
    case 'langchain-summarization-retain-0.30':
      return langchainSummarization(plan, 0.3) as Peer<unknown>;
    case 'langchain-clear-tool-uses':
      return langchainClearToolUses() as Peer<unknown>;
    case 'vercel-prune':
      return vercelPrune() as Peer<unknown>;
  }
}

/** The loop, as the peer's agent would run it: strategy, scripted model, tools, append. */
async function peerRun(name: PeerContender, plan: NeedlePlan, decisions: boolean): Promise<NeedleAgent> {
  const peer = peerFor(name, plan);
  let history: unknown[] = [peer.user(plan.task)];
  let ids = 0;
  const play = (calls: { name: string; input: Record<string, unknown> }[], text: string) => {
    const withIds = calls.map((call) => ({ ...call, id: `call_${++ids}` }));
    history.push(peer.assistant(text, withIds));
    for (const call of withIds) {
      const result = resultOf(plan, call);
      history.push(peer.result(call, result.text, result.failed));
    }
  };
  for (let k = 1; k <= needleParameters.keyTurn; k++) {
    const call = stepCall(plan.steps[k - 1] as NeedlePlan['steps'][number]);
    play([call], stepNarration(k, approxTokenEstimator.countText(call.name + JSON.stringify(call.input))));
  }
  history.push(peer.user(plan.userConstraint));
  const agent = new NeedleAgent(plan, { firstStep: needleParameters.keyTurn + 1, decisions });
  for (let turn = 0; turn < 400 && !agent.done; turn++) {
    const prepared = await peer.prepare(history);
    history = prepared.history;
    const next = agent.next(peer.lines(prepared.sent), false);
    if (next.kind === 'call') play(next.calls, next.text);
  }
  if (!agent.done) throw new Error(`${name} seed ${plan.seed}: the agent did not finish`);
  return agent;
}

/** What the plan's tools return for a call (the same texts the reins tools return). */
function resultOf(plan: NeedlePlan, call: { name: string; input: Record<string, unknown> }) {
  const step = plan.steps.find((s) => {
    const planned = stepCall(s);
    return planned.name === call.name && JSON.stringify(planned.input) === JSON.stringify(call.input);
  });
  if (!step) throw new Error(`no planned step for ${call.name}(${JSON.stringify(call.input)})`);
  const result = stepResult(step);
  // reins reports a tool's failure as JSON; the peers show the message as it came.
  return result;
}

/** One contender over the seeds: the recall run and the retry run of each plan. */
export async function peerContender(name: PeerContender, seeds: readonly number[]) {
  const results: Omit<NeedleRunResult, 'policy'>[] = [];
  for (const seed of seeds) {
    const plan = needlePlan(seed);
    const recallRun = await peerRun(name, plan, false);
    const retryRun = await peerRun(name, plan, true);
    results.push({
      seed,
      score: recallRun.final ?? recallScore([], plan.facts),
      deadEndRetries: retryRun.retries,
      recalls: 0,
      finalWindowTokens: 0,
    });
  }
  return recallRow(peerLabels[name], results);
}

const childIndex = process.argv.indexOf('--child');
if (childIndex >= 0) {
  const name = process.argv[childIndex + 1] as PeerContender;
  const seeds = (process.argv[process.argv.indexOf('--seeds') + 1] ?? '1').split(',').map(Number);
  const row = await peerContender(name, seeds);
  process.stdout.write(`${JSON.stringify({ contender: name, ...row })}\n`);
}
