import { describe, expect, it } from 'vitest';
import type { ModelResponse } from '../src/model/model.js';
import {
  type AnthropicStreamEvent,
  assembleAnthropicStream,
  assembleOpenAIChatStream,
  assembleOpenAIResponsesStream,
  type OpenAIChatChunk,
} from '../src/stream/index.js';
import { eventsOf, openAIResponsesStreams } from './support/recorded-streams.js';

/** Paths no recording exercises, each pinned so a regression in it fails somewhere. */
const start = {
  type: 'message_start',
  message: { id: 'msg_e', model: 'claude-test', usage: { input_tokens: 5, output_tokens: 1 } },
} as const;
const stop = (reason: string): AnthropicStreamEvent[] => [
  { type: 'message_delta', delta: { stop_reason: reason }, usage: { output_tokens: 3 } },
  { type: 'message_stop' },
];

describe('Anthropic edges', () => {
  it('redacted thinking keeps its opaque data, to send back unchanged', async () => {
    const response = await assembleAnthropicStream(
      eventsOf<AnthropicStreamEvent>([
        start,
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
        },
        { type: 'content_block_stop', index: 0 },
        ...stop('end_turn'),
      ]),
    );
    expect(response.content).toEqual([
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p', provider: 'anthropic' },
    ]);
  });

  it('model_context_window_exceeded is context_window_exceeded', async () => {
    const response = await assembleAnthropicStream(
      eventsOf<AnthropicStreamEvent>([start, ...stop('model_context_window_exceeded')]),
    );
    expect(response.stopReason).toBe('context_window_exceeded');
  });
});

describe('OpenAI-compatible edges', () => {
  it("DeepSeek's prompt_cache_hit_tokens are cache reads", async () => {
    const response = await assembleOpenAIChatStream(
      eventsOf<OpenAIChatChunk>([
        {
          id: 'c',
          model: 'deepseek-chat',
          choices: [{ index: 0, delta: { content: 'Hi.' }, finish_reason: 'stop' }],
        },
        {
          id: 'c',
          model: 'deepseek-chat',
          choices: [],
          usage: { prompt_tokens: 100, completion_tokens: 3, prompt_cache_hit_tokens: 60 } as never,
        },
      ]),
    );
    expect(response.usage).toMatchObject({ inputTokens: 40, cacheReadTokens: 60, outputTokens: 3 });
  });
});

/**
 * The recorded Responses streams end with `response.completed`, whose `output` is what the SDK's
 * `finalResponse()` returns, and reins too. So the deltas are checked here: with every `*.done`
 * event (items, parts, text, arguments, summaries) and the final `output` taken away, the text, annotations, reasoning summaries
 * and arguments rebuilt from the deltas alone must give the same response.
 */
describe('Responses: the deltas alone rebuild the final output', () => {
  /** Some files hold several responses back to back: one per `response.completed`. */
  const responses = openAIResponsesStreams().flatMap((stream) => {
    if (stream.malformed) return [];
    const parts: { name: string; events: typeof stream.events }[] = [];
    let current: typeof stream.events = [];
    for (const event of stream.events) {
      current.push(event);
      if (event.type === 'response.completed') {
        parts.push({ name: `${stream.name}#${parts.length + 1}`, events: current });
        current = [];
      }
    }
    return parts;
  });
  const streams = responses;
  const withoutFinals = (events: (typeof streams)[number]['events']) =>
    events
      .filter((event) => !event.type?.endsWith('.done'))
      .map((event) =>
        event.type === 'response.completed'
          ? { ...event, response: { ...(event['response'] as object), output: [] } }
          : event,
      );
  /** What the deltas carry: text, citations, tool input, reasoning summaries (not ids or statuses). */
  const carried = (response: ModelResponse) =>
    response.content.map((block) => {
      if (block.type === 'text') return { text: block.text, citations: block.citations?.length ?? 0 };
      if (block.type === 'tool_use') return { call: block.name, input: block.input };
      if (block.type === 'thinking') return { thinking: block.thinking };
      return { kind: block.type === 'provider' ? block.kind : block.type };
    });
  // Two recordings were shortened by their authors: their text deltas add up to less than the
  // final text ("Got it" for a two-sentence answer). For them the check is that this is so.
  const abbreviated = new Set([
    'vercel/openai-responses/openai-phase.1.chunks.txt#1',
    'vercel/openai-responses/openai-shell-container.1.chunks.txt#1',
  ]);
  for (const stream of streams) {
    it(stream.name, async () => {
      if (abbreviated.has(stream.name)) {
        const deltas = stream.events
          .filter((event) => event.type === 'response.output_text.delta')
          .map((event) => String(event['delta']))
          .join('');
        const whole = await assembleOpenAIResponsesStream(eventsOf(stream.events));
        const text = whole.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
        expect(deltas.length).toBeLessThan(text.length / 4);
        return;
      }
      // Responses whose final output differs from the streamed items (rotated ids, re-encrypted
      // content) still carry the same text and arguments.
      const whole = await assembleOpenAIResponsesStream(eventsOf(stream.events));
      const rebuilt = await assembleOpenAIResponsesStream(eventsOf(withoutFinals(stream.events)));
      expect(carried(rebuilt)).toEqual(carried(whole));
      expect(rebuilt.stopReason).toBe(whole.stopReason);
    });
  }
  it('compared every finished recording', () => {
    expect(streams.length).toBeGreaterThan(25);
  });
});

describe('AI SDK edges', () => {
  it("an error part's statusCode is the status, whatever its type says", async () => {
    const { assembleAiSdkStream } = await import('../src/ai-sdk/assemble-ai-sdk-stream.js');
    const parts = new ReadableStream({
      start(controller) {
        controller.enqueue({
          type: 'error',
          error: { type: 'provider_error', message: 'upstream down', statusCode: 503 },
        });
        controller.close();
      },
    });
    const thrown = await assembleAiSdkStream(parts as never, { providerKey: 'mock' } as never).catch(
      (error: unknown) => error,
    );
    expect(thrown).toMatchObject({
      name: 'StreamError',
      status: 503,
      type: 'provider_error',
      message: 'upstream down',
    });
  });
});
