import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicModel } from '../src/anthropic/index.js';
import { defineTool, runAgent } from '../src/index.js';
import type { Message } from '../src/model/content.js';
import type { Model, ModelResponse } from '../src/model/model.js';
import { openAIModel } from '../src/openai/index.js';
import { retryingModel } from '../src/resilience/index.js';
import { memoryTraceSink } from '../src/trace/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';

/** Hostile and sloppy servers, through the real SDK clients: each gets a labeled outcome, nothing runs twice. */
const anthropic = (url: string) =>
  anthropicModel(new Anthropic({ apiKey: 't', baseURL: url, maxRetries: 0 }), { model: 'claude-test' });
const openai = (url: string) =>
  openAIModel(new OpenAI({ apiKey: 't', baseURL: `${url}/v1`, maxRetries: 0 }), { model: 'gpt-test' });
const start = (id = 'msg_1') => ({
  type: 'message_start',
  message: {
    id,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [],
    stop_reason: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  },
});
const end = (stop: string) => [
  { type: 'message_delta', delta: { stop_reason: stop }, usage: { output_tokens: 5 } },
  { type: 'message_stop' },
];
const anthropicSse = (events: unknown[]): Reply => ({ kind: 'sse', format: 'anthropic', events });
const chatSse = (events: unknown[]): Reply => ({ kind: 'sse', format: 'openai', events });
const text = (id: string, words: string) =>
  anthropicSse([
    start(id),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: words } },
    { type: 'content_block_stop', index: 0 },
    ...end('end_turn'),
  ]);
const hi: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
const request = { system: '', messages: hi, tools: [], toolChoice: 'auto' as const };
function lookup(runs: unknown[]) {
  return defineTool({
    name: 'lookup',
    description: 'Look up.',
    effect: 'read',
    input: z.object({ q: z.string() }),
    execute: (input) => {
      runs.push(input);
      return `found ${input.q}`;
    },
  });
}

let server: Awaited<ReturnType<typeof startProviderServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('hostile streams', () => {
  // Indices are kept in a Map: the largest safe index costs one entry. Stored in an array and
  // walked, this test would not finish (it did not, before).
  it('a block index of 2^53 − 1 is one block, not a sparse walk (Anthropic and Chat)', async () => {
    const huge = Number.MAX_SAFE_INTEGER;
    server = await startProviderServer([
      anthropicSse([
        start(),
        { type: 'content_block_start', index: huge, content_block: { type: 'text', text: 'x' } },
        ...end('end_turn'),
      ]),
      chatSse([
        {
          id: 'c',
          model: 'g',
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index: huge, id: 'a', type: 'function', function: { name: 'lookup', arguments: '{}' } },
                ],
              },
            },
          ],
        },
        { id: 'c', model: 'g', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]),
    ]);
    expect((await anthropic(server.url).generate(request)).content).toEqual([{ type: 'text', text: 'x' }]);
    expect((await openai(server.url).generate(request)).content).toEqual([
      { type: 'tool_use', id: 'a', name: 'lookup', input: {} },
    ]);
  });

  it('two tool calls under one id: the turn is malformed, nothing runs, nothing is sent back', async () => {
    const call = (index: number, q: string) => [
      {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: 'toolu_dup', name: 'lookup', input: {} },
      },
      {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify({ q }) },
      },
      { type: 'content_block_stop', index },
    ];
    server = await startProviderServer([
      anthropicSse([start(), ...call(0, 'a'), ...call(1, 'b'), ...end('tool_use')]),
    ]);
    const runs: unknown[] = [];
    const result = await runAgent({ model: anthropic(server.url), input: 'go', tools: [lookup(runs)] });
    expect(result.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'malformed_response',
      error: { message: expect.stringContaining('two tool calls with the id') },
    });
    expect(runs).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('a garbled frame mid-answer is a retryable provider error on every adapter, not a truncated answer', async () => {
    const garbledAnthropic = `event: message_start\ndata: ${JSON.stringify(start())}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"par"}}\n\nevent: content_block_delta\ndata: {garbage\n\n`;
    server = await startProviderServer([
      { kind: 'raw', body: garbledAnthropic },
      text('msg_2', 'full answer'),
    ]);
    const seen: string[] = [];
    const retry = {
      maxAttempts: 2,
      backoff: { next: () => ({ delayMs: 1, backoff: null as never }) },
      onRetry: ({ classification }: { classification: { reason: string } }) =>
        seen.push(classification.reason),
    };
    const result = await runAgent({ model: retryingModel(anthropic(server.url), retry), input: 'go' });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'full answer' });
    await server.close();
    const chunk = (content: string) =>
      JSON.stringify({
        id: 'c',
        object: 'chat.completion.chunk',
        model: 'g',
        choices: [{ index: 0, delta: { content } }],
      });
    server = await startProviderServer([
      { kind: 'raw', body: `data: ${chunk('par')}\n\ndata: {garbage\n\n` },
      chatSse([
        JSON.parse(chunk('whole')),
        { id: 'c', model: 'g', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      ]),
    ]);
    const chat = await runAgent({ model: retryingModel(openai(server.url), retry), input: 'go' });
    expect(chat.outcome).toEqual({ kind: 'answered', text: 'whole' });
    expect(seen).toEqual(['malformed_event', 'malformed_event']);
  });
});

describe('usage a server did not report', () => {
  it('a Chat server that ignores include_usage is billed by estimate, and the token budget still bites', async () => {
    const toolTurn = (id: string) =>
      chatSse([
        {
          id: 'c',
          model: 'gpt-test',
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index: 0, id, type: 'function', function: { name: 'lookup', arguments: '{"q":"b"}' } },
                ],
              },
            },
          ],
        },
        { id: 'c', model: 'gpt-test', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]);
    server = await startProviderServer([toolTurn('call_1'), toolTurn('call_2'), toolTurn('call_3')]);
    const sink = memoryTraceSink();
    const result = await runAgent({
      model: openai(server.url),
      input: 'x '.repeat(4_000),
      tools: [lookup([])],
      maxSteps: 3,
      maxBilledTokens: 3_000,
      trace: sink,
    });
    expect(result.usage.inputTokens).toBeGreaterThan(1_000);
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'billed_tokens' });
    expect(sink.events.find((event) => event.type === 'model-response')).toMatchObject({
      usageEstimated: true,
    });
  });

  it('additional usage under a name that is not a model is counted, and the spend limit fails closed', async () => {
    const usage = { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const model: Model = {
      name: 'cheap',
      generate: async (): Promise<ModelResponse> => ({
        content: [{ type: 'text', text: 'ok' }],
        stopReason: 'end_turn',
        usage,
        model: 'cheap',
        additionalUsage: [{ model: 42 as unknown as string, usage: { ...usage, outputTokens: 1_000_000 } }],
      }),
    };
    const result = await runAgent({
      model,
      input: 'hi',
      prices: { cheap: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1 } },
      maxSpendUsd: 0.5,
    });
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'spend_usd', unpriced: '42' });
    expect(result.usage.outputTokens).toBe(1_000_010);
  });
});

describe('continuing on Anthropic after another provider', () => {
  it('an assistant turn with nothing Anthropic can read is dropped, and no empty content is sent', async () => {
    server = await startProviderServer([text('msg_1', 'Answer.')]);
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Think.' }] },
      {
        role: 'assistant',
        content: [{ type: 'thinking', thinking: 'gpt reasoning', provider: 'openai-compatible' }],
      },
      { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ];
    const result = await runAgent({ model: anthropic(server.url), input: messages });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Answer.' });
    const sent =
      (server.requests[0]?.body as { messages: { role: string; content: unknown[] }[] } | undefined)
        ?.messages ?? [];
    expect(sent.map((message) => message.role)).toEqual(['user']);
    expect(sent[0]?.content).toEqual([
      { type: 'text', text: 'Think.' },
      { type: 'text', text: 'Go on.' },
    ]);
  });
});

describe('settings set on an adapter are checked like the run’s', () => {
  it.each([
    [{ temperature: Number.NaN }, 'settings.temperature'],
    [{ thinking: { effort: 'bogus' } }, 'settings.thinking.effort'],
    [{ cache: { messages: [1.5] } }, 'settings.cache.messages'],
    [{ providerOptions: { openai: 5 } }, 'settings.providerOptions.openai'],
  ])('%j is a labeled error before any request, on every native adapter', async (settings, field) => {
    server = await startProviderServer([]);
    const adapters = [
      anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'c',
        settings: settings as never,
      }),
      openAIModel(new OpenAI({ apiKey: 't', baseURL: `${server.url}/v1`, maxRetries: 0 }), {
        model: 'g',
        settings: settings as never,
      }),
    ];
    for (const adapter of adapters)
      await expect(adapter.generate(request)).rejects.toMatchObject({
        name: 'ConfigurationError',
        option: field,
      });
    expect(server.requests).toHaveLength(0);
  });
});

describe('blocks the loop could not reload', () => {
  it.each([
    [{ type: 'image', source: 'x' }, 'source'],
    [{ type: 'thinking' }, 'thinking'],
    [{ type: 'provider', provider: 'anthropic', kind: 'x' }, 'raw'],
  ])('a model returning %j is a malformed response, labeled, never kept', async (block, field) => {
    const model: Model = {
      name: 'm',
      generate: async () => ({ content: [block as never], stopReason: 'end_turn' }),
    };
    const result = await runAgent({ model, input: 'hi' });
    expect(result.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'malformed_response',
      error: { message: expect.stringContaining(field) },
    });
  });
});
