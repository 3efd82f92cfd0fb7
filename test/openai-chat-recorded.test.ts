import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssistantBlock } from '../src/model/content.js';
import type { ModelResponse, StopReason, Usage } from '../src/model/model.js';
import { openAIModel } from '../src/openai/index.js';
import { assembleOpenAIChatStream, type OpenAIChatChunk } from '../src/stream/index.js';
import { startProviderServer } from './support/provider-server.js';
import { eventsOf, openAIChatStreams, type RecordedStream } from './support/recorded-streams.js';

/**
 * Every recorded OpenAI Chat Completions stream, read two ways: the assembler fed the chunks
 * directly, and `openAIModel` over the real SDK client against a loopback server replaying the
 * recorded bytes. Both must agree with the SDK's own accumulator
 * (`ChatCompletionStream.finalChatCompletion()`) on the same bytes, field by field, except where
 * this file says why reins's rule wins.
 */
const streams = openAIChatStreams();
type Sdk = OpenAI.Chat.ChatCompletion;

const finishReasons: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

let server: Awaited<ReturnType<typeof startProviderServer>>;
const client = () => new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
beforeAll(async () => {
  server = await startProviderServer([]);
});
afterAll(() => server.close());

/**
 * The SDK's completion for the recorded bytes. Rule over SDK: a stream whose only tool call has
 * `index: 1` (Anthropic's OpenAI-compatible endpoint, after a text block) leaves a hole at index 0
 * that makes `finalChatCompletion()` throw a TypeError; the SDK's own accumulated snapshot is the
 * truth then, and reins reports the one call.
 */
async function sdkTruth(stream: RecordedStream): Promise<Sdk> {
  server.replies.push({ kind: 'raw', body: stream.sse });
  const runner = client().chat.completions.stream({
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
  });
  let snapshot: unknown;
  runner.on('chunk', (_chunk, accumulated) => {
    snapshot = accumulated;
  });
  try {
    return await runner.finalChatCompletion();
  } catch (error) {
    // Only the recording with a sparse tool-call array (index 1 alone), on which the SDK's
    // finalChatCompletion() throws a TypeError: its accumulated snapshot is the truth there.
    const sparse = stream.name.endsWith('anthropic-fallback-tool-call.sse');
    if (!sparse || !(error instanceof Error && error.cause instanceof TypeError) || !snapshot) throw error;
    return snapshot as Sdk;
  }
}

async function throughSdk(body: string): Promise<ModelResponse> {
  server.replies.push({ kind: 'raw', body });
  return openAIModel(client(), { model: 'm' }).generate({
    system: '',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    toolChoice: 'auto',
  });
}

const direct = (events: readonly unknown[]) =>
  assembleOpenAIChatStream(eventsOf(events as OpenAIChatChunk[]));

/** What reins must report for the SDK's completion, under this rules. */
function expected(sdk: Sdk, stream: RecordedStream) {
  const choice = sdk.choices[0];
  const message = choice?.message;
  const text = [message?.content ?? '', message?.refusal ?? ''].filter((piece) => piece !== '');
  const calls = (message?.tool_calls ?? []).filter(Boolean).map((call) => {
    if (call.type !== 'function') throw new Error(`unexpected ${call.type}`);
    const args = call.function.arguments;
    return { id: call.id, name: call.function.name, input: args.trim() === '' ? {} : JSON.parse(args) };
  });
  // The SDK reports a refusal in `message.refusal` beside `finish_reason: stop`; reins says `refusal`.
  const stopReason: StopReason = message?.refusal
    ? 'refusal'
    : (finishReasons[choice?.finish_reason ?? ''] ?? 'other');
  return {
    text,
    calls,
    stopReason,
    usage: usageOf(sdk.usage),
    id: sdk.id,
    model: sdk.model,
    reasoning: reasoningOf(stream),
  };
}

function usageOf(usage: OpenAI.CompletionUsage | undefined): Usage | undefined {
  // A stream that reports no usage has none: the loop estimates rather than billing zero.
  if (!usage) return undefined;
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  const out: Usage = {
    inputTokens: (usage?.prompt_tokens ?? 0) - cached,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: usage?.completion_tokens ?? 0,
  };
  if (typeof reasoning !== 'number') return out;
  out.reasoningTokens = reasoning;
  // Rule over SDK: xAI counts reasoning outside `completion_tokens` (its `total_tokens` is
  // prompt + completion + reasoning) and bills it as output; reins adds it back so reasoning stays
  // a part of `outputTokens`, as `Usage` documents, and the bill is right.
  if (reasoning > 0 && usage?.total_tokens === (usage?.prompt_tokens ?? 0) + out.outputTokens + reasoning)
    out.outputTokens += reasoning;
  return out;
}

/**
 * Rule over SDK: the SDK's accumulator `Object.assign`s unknown delta fields, so its
 * `message.reasoning_content` is only the last fragment. reins concatenates every fragment.
 */
function reasoningOf(stream: RecordedStream): string {
  let reasoning = '';
  for (const event of stream.events as OpenAIChatChunk[])
    for (const choice of event.choices ?? []) reasoning += choice.delta?.reasoning_content ?? '';
  return reasoning;
}

function actual(response: ModelResponse) {
  const texts = response.content.filter((block) => block.type === 'text').map((block) => block.text);
  const calls = response.content
    .filter((block): block is Extract<AssistantBlock, { type: 'tool_use' }> => block.type === 'tool_use')
    .map(({ id, name, input }) => ({ id, name, input }));
  const thinking = response.content.filter((block) => block.type === 'thinking');
  return {
    text: texts,
    calls,
    stopReason: response.stopReason,
    usage: response.usage,
    id: response.id,
    model: response.model,
    reasoning: thinking.map((block) => block.thinking).join(''),
  };
}

describe('recorded OpenAI Chat Completions streams agree with ChatCompletionStream', () => {
  it('reads every recorded Chat stream (9 files and snapshots)', () => {
    expect(streams.map((stream) => stream.name)).toHaveLength(9);
  });

  describe.each(streams.map((stream) => [stream.name, stream] as const))('%s', (_name, stream) => {
    it('the assembler fed the chunks directly', async () => {
      const sdk = await sdkTruth(stream);
      expect(actual(await direct(stream.events))).toEqual(expected(sdk, stream));
    });

    it('openAIModel over the real SDK client replaying the recorded bytes', async () => {
      const sdk = await sdkTruth(stream);
      expect(actual(await throughSdk(stream.sse))).toEqual(expected(sdk, stream));
    });
  });

  it('Azure opens with `id: ""`, `model: ""`: the first non-empty ones are kept', async () => {
    const azure = streams.find((stream) => stream.name.includes('azure-model-router')) as RecordedStream;
    const response = await direct(azure.events);
    expect(response).toMatchObject({
      id: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt',
      model: 'gpt-5-nano-2025-08-07',
    });
    expect(response.usage?.reasoningTokens).toBe(64);
  });

  it('xAI reasoning is a thinking block marked openai-compatible, ahead of the tool call', async () => {
    const xai = streams.find((stream) => stream.name.includes('xai-tool-call')) as RecordedStream;
    const response = await throughSdk(xai.sse);
    expect(response.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect(response.content[0]).toMatchObject({ provider: 'openai-compatible' });
    expect(response.usage).toEqual({
      inputTokens: 1,
      cacheReadTokens: 306,
      cacheWriteTokens: 0,
      outputTokens: 26 + 227,
      reasoningTokens: 227,
    });
  });

  it('the recorded tool stream cut mid-arguments is interrupted, its call never executable', async () => {
    const fallback = streams.find((stream) => stream.name.includes('anthropic-fallback')) as RecordedStream;
    // Ten bytes into the frame after the one carrying `{"pa` (the recording is ASCII).
    const cutAt = fallback.sse.indexOf('\n\n', fallback.sse.indexOf('{\\"pa"')) + 2 + 10;
    server.replies.push({ kind: 'raw', body: fallback.sse, cutAt });
    const response = await openAIModel(client(), { model: 'm' }).generate({
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      toolChoice: 'auto',
    });
    expect(response.stopReason).toBe('interrupted');
    expect(response.content.at(-1)).toMatchObject({ type: 'tool_use', input: undefined, inputText: '{"pa' });
  });
});
