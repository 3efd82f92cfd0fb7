import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicModel } from '../src/anthropic/index.js';
import { type AssistantBlock, textOf, toolCallsOf } from '../src/model/content.js';
import type { ModelResponse } from '../src/model/model.js';
import { type AnthropicStreamEvent, assembleAnthropicStream } from '../src/stream/index.js';
import { startProviderServer } from './support/provider-server.js';
import { anthropicStreams, eventsOf, type RecordedStream } from './support/recorded-streams.js';

/**
 * Every recorded Anthropic Messages stream, read two ways: the assembler fed the events directly,
 * and `anthropicModel` over the real SDK client against a loopback server replaying the recorded
 * bytes. Both must agree with the SDK's own accumulator (`MessageStream.finalMessage()`) on the
 * same bytes, field by field, except where this file says why reins's rule wins.
 */
const streams = anthropicStreams();
type Sdk = Awaited<ReturnType<ReturnType<Anthropic['messages']['stream']>['finalMessage']>>;

const stopReasons: Record<string, ModelResponse['stopReason']> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
  pause_turn: 'pause_turn',
};

let server: Awaited<ReturnType<typeof startProviderServer>>;
const client = () => new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
beforeAll(async () => {
  server = await startProviderServer([]);
});
afterAll(() => server.close());

async function sdkTruth(stream: RecordedStream): Promise<Sdk | Error> {
  server.replies.push({ kind: 'raw', body: stream.sse });
  try {
    return await client()
      .messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
  } catch (error) {
    return error as Error;
  }
}

async function throughSdk(stream: RecordedStream): Promise<ModelResponse> {
  server.replies.push({ kind: 'raw', body: stream.sse });
  return anthropicModel(client(), { model: 'm' }).generate({
    system: '',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    toolChoice: 'auto',
  });
}

/** The wire block each reins block stands for, to compare with the SDK's. */
function wireOf(block: AssistantBlock): unknown {
  switch (block.type) {
    case 'text':
      return block.citations
        ? { type: 'text', text: block.text, citations: block.citations }
        : { type: 'text', text: block.text };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input, ...block.providerData };
    case 'provider':
      return block.raw;
    default:
      return block;
  }
}

/**
 * Where the SDK's accumulator is wrong and reins's rule wins, the SDK's block is corrected here:
 * - it keeps only the last `compaction_delta`-free start of a compaction block (`content: null`),
 *   but the API needs the summary back to continue the compacted conversation;
 * - it does not gather `input_json_delta` for `mcp_tool_use`, so the MCP call's input reads `{}`.
 * Both are checked against the recorded deltas in 'what the SDK drops' below.
 */
const sdkWire = (block: Record<string, unknown>, ours: AssistantBlock | undefined) => {
  const copy = JSON.parse(JSON.stringify(block)) as Record<string, unknown>;
  if (ours?.type === 'provider' && (copy['type'] === 'compaction' || copy['type'] === 'mcp_tool_use')) {
    const field = copy['type'] === 'compaction' ? 'content' : 'input';
    copy[field] = ours.raw[field];
  }
  if (
    copy['type'] === 'text' &&
    (copy['citations'] === null || (Array.isArray(copy['citations']) && copy['citations'].length === 0))
  )
    delete copy['citations'];
  return copy;
};

/** Compares one reins response with the SDK's message, field by field. */
function expectAgrees(name: string, ours: ModelResponse, sdk: Sdk, stream: RecordedStream) {
  const sdkText = sdk.content
    .flatMap((block: Sdk['content'][number]) => (block.type === 'text' ? [block.text] : []))
    .join('');
  expect(textOf(ours.content), `${name}: text`).toBe(sdkText);
  const sdkCalls = sdk.content.flatMap((block: Sdk['content'][number]) =>
    block.type === 'tool_use' ? [{ id: block.id, name: block.name, input: block.input }] : [],
  );
  expect(
    toolCallsOf(ours.content).map(({ id, name: tool, input }) => ({ id, name: tool, input })),
    `${name}: tool calls`,
  ).toEqual(sdkCalls);
  // The container the SDK keeps on the message, reins keeps as a last block (see the adapter).
  const container = ours.content.find((block) => block.type === 'provider' && block.kind === 'container');
  expect(container?.type === 'provider' ? container.raw : null, `${name}: container`).toEqual(
    (sdk as unknown as { container?: unknown }).container ?? null,
  );
  const blocks = ours.content.filter((block) => block !== container);
  expect(blocks.map(wireOf), `${name}: blocks`).toEqual(
    sdk.content.map((block: Sdk['content'][number], at: number) => sdkWire(block as never, blocks[at])),
  );
  expect(ours.stopReason, `${name}: stop reason`).toBe(stopReasons[sdk.stop_reason ?? ''] ?? 'other');
  expect(ours.id, `${name}: id`).toBe(sdk.id);
  expect(ours.model, `${name}: model`).toBe(sdk.model);
  const iterations = iterationsOf(stream);
  if (iterations) return expectIterationUsage(name, ours, iterations);
  expect(ours.usage, `${name}: usage`).toEqual({
    inputTokens: sdk.usage.input_tokens,
    outputTokens: sdk.usage.output_tokens,
    cacheReadTokens: sdk.usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: sdk.usage.cache_creation_input_tokens ?? 0,
  });
}

interface Iteration {
  type: string;
  model?: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

const iterationsOf = (stream: RecordedStream): Iteration[] | undefined => {
  const deltas = stream.events.filter((event) => event.type === 'message_delta');
  const usage = (deltas.at(-1)?.['usage'] ?? {}) as { iterations?: Iteration[] };
  return usage.iterations?.length ? usage.iterations : undefined;
};

/**
 * The SDK copies only the top-level counters of `message_delta`, which leave out compaction and
 * the iterations another model ran (an advisor, a fallback). reins bills every iteration, each at
 * its own model's price, and sizes the next prefill by the last conversational iteration, not by
 * the sum (the rule: a context budget fed the sum stops runs that fit).
 */
function expectIterationUsage(name: string, ours: ModelResponse, iterations: Iteration[]) {
  const sum = (pick: (step: Iteration) => number | undefined) =>
    iterations.reduce((total, step) => total + (pick(step) ?? 0), 0);
  const all = [ours.usage, ...(ours.additionalUsage ?? []).map((entry) => entry.usage)];
  const ourSum = (pick: (usage: NonNullable<ModelResponse['usage']>) => number) =>
    all.reduce((total, u) => total + (u ? pick(u) : 0), 0);
  expect(
    ourSum((u) => u.inputTokens),
    `${name}: billed input`,
  ).toBe(sum((s) => s.input_tokens));
  expect(
    ourSum((u) => u.outputTokens),
    `${name}: billed output`,
  ).toBe(sum((s) => s.output_tokens));
  expect(
    ourSum((u) => u.cacheReadTokens),
    `${name}: cache read`,
  ).toBe(sum((s) => s.cache_read_input_tokens));
  for (const entry of ours.additionalUsage ?? []) expect(entry.model).not.toBe(ours.model);
  const last = iterations.findLast((step) => step.type === 'message' || step.type === 'fallback_message');
  expect(ours.contextTokens, `${name}: context after the call`).toBe(
    (last?.input_tokens ?? 0) +
      (last?.cache_read_input_tokens ?? 0) +
      (last?.cache_creation_input_tokens ?? 0) +
      (last?.output_tokens ?? 0),
  );
}

/**
 * Streams the SDK cannot finish or finishes wrongly, with reins's rule and why.
 */
const reinsRule: Record<string, (ours: ModelResponse, sdk: Sdk | Error) => void> = {
  // The SDK finalizes a tool block cut off mid-argument into a shortened object that would run;
  // reins keeps only the raw text and ends the turn `interrupted`, so the loop runs nothing.
  'anthropic-sdk/tests/lib/fixtures/incomplete_partial_json_response.txt': (ours, sdk) => {
    expect(sdk).not.toBeInstanceOf(Error);
    const call = toolCallsOf(ours.content)[0];
    expect(call?.input).toBeUndefined();
    expect(call?.inputText).toMatch(/^\{/);
    expect(() => JSON.parse(call?.inputText ?? '')).toThrow();
    // The recording stops at max_tokens: the loop labels that `truncated` and runs nothing.
    expect(ours.stopReason).toBe('max_tokens');
  },
  // The SDK throws on a second message_start before message_stop. An exact repeat (same id, no
  // content yet) is a proxy's duplicate: reins ignores it.
  'vercel/anthropic/duplicate-message-start.chunks.txt': (ours, sdk) => {
    expect(sdk).toBeInstanceOf(Error);
    expect(textOf(ours.content)).toBe('Hello, World!');
    expect(ours).toMatchObject({
      id: 'msg_dup',
      stopReason: 'end_turn',
      usage: { inputTokens: 17, outputTokens: 227 },
    });
  },
  // A different message started mid-stream (a retried stream spliced in): the first is abandoned,
  // its half-streamed tool call never runs, and the second message is the answer.
  'vercel/anthropic/spliced-message-start.chunks.txt': (ours, sdk) => {
    expect(sdk).toBeInstanceOf(Error);
    expect(ours.id).toBe('msg_second');
    expect(ours.content).toEqual([
      { type: 'thinking', thinking: 'Let me call the tool.', signature: 'sig-second', provider: 'anthropic' },
      { type: 'tool_use', id: 'toolu_second', name: 'test-tool', input: { value: 'Sparkle Day' } },
    ]);
    expect(ours.stopReason).toBe('tool_use');
  },
};

describe(`recorded Anthropic streams (${streams.length}) agree with MessageStream.finalMessage()`, () => {
  for (const stream of streams) {
    it(stream.name, async () => {
      const truth = await sdkTruth(stream);
      const direct = await assembleAnthropicStream(
        eventsOf(stream.events) as AsyncIterable<AnthropicStreamEvent>,
      );
      const viaSdk = await throughSdk(stream);
      expect(viaSdk, 'both paths give the same response').toEqual(direct);
      const rule = reinsRule[stream.name];
      if (rule) return rule(direct, truth);
      if (truth instanceof Error) throw truth;
      expectAgrees(stream.name, direct, truth, stream);
    });
  }
});
