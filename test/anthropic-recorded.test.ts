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
 * bytes. Both must agree with the SDK's own accumulator on the same bytes, field by field, except
 * where this file says why reins's rule wins. The accumulator is the SDK's beta one
 * (`client.beta.messages.stream().finalMessage()`): it reads what the plain `MessageStream` drops
 * (MCP tool input, `compaction_delta`, `usage.iterations`, `output_tokens_details`), and on
 * everything else the two agree, which the first test checks.
 */
const streams = anthropicStreams();
type Sdk = Awaited<ReturnType<ReturnType<Anthropic['beta']['messages']['stream']>['finalMessage']>>;

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

const ask = { model: 'm', max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }] };
async function sdkTruth(stream: RecordedStream): Promise<Sdk | Error> {
  server.replies.push({ kind: 'raw', body: stream.sse });
  try {
    return await client().beta.messages.stream(ask).finalMessage();
  } catch (error) {
    return error as Error;
  }
}

/** The plain (non-beta) accumulator, for the check that the two SDK accumulators agree. */
async function plainTruth(stream: RecordedStream) {
  server.replies.push({ kind: 'raw', body: stream.sse });
  try {
    return await client().messages.stream(ask).finalMessage();
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

/** The SDK's block as JSON (no empty citation lists), to compare with reins's wire form. */
const sdkWire = (block: Record<string, unknown>) => {
  const copy = JSON.parse(JSON.stringify(block)) as Record<string, unknown>;
  if (
    copy['type'] === 'text' &&
    (copy['citations'] === null || (Array.isArray(copy['citations']) && copy['citations'].length === 0))
  )
    delete copy['citations'];
  return copy;
};

/** Compares one reins response with the SDK's message, field by field. */
function expectAgrees(name: string, ours: ModelResponse, sdk: Sdk) {
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
    sdk.content.map((block: Sdk['content'][number]) => sdkWire(block as never)),
  );
  expect(ours.stopReason, `${name}: stop reason`).toBe(stopReasons[sdk.stop_reason ?? ''] ?? 'other');
  expect(ours.id, `${name}: id`).toBe(sdk.id);
  expect(ours.model, `${name}: model`).toBe(sdk.model);
  const iterations = sdk.usage.iterations as Iteration[] | null | undefined;
  if (iterations?.length) expectIterationUsage(name, ours, iterations);
  else
    expect(ours.usage && { ...ours.usage, reasoningTokens: undefined }, `${name}: usage`).toEqual({
      inputTokens: sdk.usage.input_tokens,
      outputTokens: sdk.usage.output_tokens,
      cacheReadTokens: sdk.usage.cache_read_input_tokens ?? 0,
      cacheWriteTokens: sdk.usage.cache_creation_input_tokens ?? 0,
    });
  const thinking = (sdk.usage as { output_tokens_details?: { thinking_tokens?: number } | null })
    .output_tokens_details?.thinking_tokens;
  expect(ours.usage?.reasoningTokens, `${name}: reasoning tokens`).toBe(thinking ?? undefined);
}

interface Iteration {
  type: string;
  model?: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

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
  expect(
    ourSum((u) => u.cacheWriteTokens),
    `${name}: cache write`,
  ).toBe(sum((s) => s.cache_creation_input_tokens));
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
    // Everything else agrees with the SDK: the same response with the SDK's shortened input
    // put where reins keeps only the raw text.
    const patched = {
      ...ours,
      content: ours.content.map((block) =>
        block.type === 'tool_use' && block.inputText !== undefined
          ? (() => {
              const { inputText: _raw, ...rest } = block;
              return {
                ...rest,
                input: (sdk as Sdk).content.find((b: Sdk['content'][number]) => b.type === 'tool_use')?.input,
              };
            })()
          : block,
      ),
    } as ModelResponse;
    expectAgrees('incomplete_partial_json_response', patched, sdk as Sdk);
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

describe('the two SDK accumulators', () => {
  it('the plain MessageStream and the beta one agree on text, tool calls, stop reason, id and model', async () => {
    let compared = 0;
    for (const stream of streams) {
      const [beta, plain] = [await sdkTruth(stream), await plainTruth(stream)];
      if (beta instanceof Error || plain instanceof Error) {
        expect(beta instanceof Error, stream.name).toBe(plain instanceof Error);
        continue;
      }
      const pick = (message: Sdk | typeof plain) => ({
        text: (message.content as { type: string; text?: string }[])
          .flatMap((block) => (block.type === 'text' ? [block.text] : []))
          .join(''),
        calls: (message.content as { type: string; id?: string; input?: unknown }[]).flatMap((block) =>
          block.type === 'tool_use' ? [[block.id, block.input]] : [],
        ),
        stop: message.stop_reason,
        id: message.id,
        model: message.model,
      });
      // After a `fallback` block the beta accumulator relabels the model to the one that served the
      // answer (as the non-streaming message is labelled); the plain one keeps the first. reins
      // follows the beta one: the serving model is the one whose price applies.
      const fellBack = (beta.content as { type: string }[]).some((block) => block.type === 'fallback');
      expect({ ...pick(beta), model: fellBack ? 'relabelled' : beta.model }, stream.name).toEqual({
        ...pick(plain as never),
        model: fellBack ? 'relabelled' : plain.model,
      });
      compared++;
    }
    expect(compared).toBeGreaterThan(50);
  });
});

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
      expectAgrees(stream.name, direct, truth);
    });
  }
});
