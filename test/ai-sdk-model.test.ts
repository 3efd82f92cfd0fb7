import { createAnthropic } from '@ai-sdk/anthropic';
import {
  APICallError,
  JSONParseError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
} from '@ai-sdk/provider';
import Anthropic from '@anthropic-ai/sdk';
import { jsonSchema, simulateReadableStream, streamText, tool } from 'ai';
import { MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiSdkModel } from '../src/ai-sdk/index.js';
import { anthropicModel } from '../src/anthropic/index.js';
import { isConfigurationError } from '../src/errors/index.js';
import {
  defineTool,
  type Message,
  type Model,
  type ModelRequest,
  type ModelSettings,
  runAgent,
} from '../src/index.js';
import { toResponsesInput } from '../src/openai/index.js';
import { classifyError } from '../src/resilience/index.js';
import { StreamError } from '../src/stream/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';
import { anthropicStreams } from './support/recorded-streams.js';

const usage = (over: Partial<LanguageModelV4Usage['inputTokens']> = {}): LanguageModelV4Usage => ({
  inputTokens: { total: 100, noCache: 70, cacheRead: 20, cacheWrite: 10, ...over },
  outputTokens: { total: 15, text: 10, reasoning: 5 },
});
const finish = (unified: string, raw?: string): LanguageModelV4StreamPart =>
  ({ type: 'finish', finishReason: { unified, raw }, usage: usage() }) as LanguageModelV4StreamPart;

/** A V4 mock that streams `chunks` without delays and records its calls. */
function mock(chunks: LanguageModelV4StreamPart[], provider = 'mock.chat') {
  return new MockLanguageModelV4({
    provider,
    modelId: 'mock-1',
    doStream: async () => ({
      stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }),
    }),
  });
}

const ask = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  toolChoice: 'auto',
  ...over,
});

describe('aiSdkModel with the AI SDK mock model (LanguageModelV4)', () => {
  it('text: deltas shown live, id and model from response-metadata, usage split into uncached, cache and reasoning', async () => {
    const shown: string[] = [];
    const model = aiSdkModel(
      mock([
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: 'resp_1', modelId: 'mock-1-2026' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello' },
        { type: 'text-delta', id: 't', delta: ' world' },
        { type: 'text-end', id: 't' },
        { type: 'raw', rawValue: { anything: true } },
        finish('stop', 'end_turn'),
      ]),
      { onText: (delta) => shown.push(delta) },
    );
    expect(model.name).toBe('mock-1');
    expect(await model.generate(ask())).toEqual({
      content: [{ type: 'text', text: 'Hello world' }],
      stopReason: 'end_turn',
      usage: {
        inputTokens: 70,
        outputTokens: 15,
        cacheReadTokens: 20,
        cacheWriteTokens: 10,
        reasoningTokens: 5,
      },
      id: 'resp_1',
      model: 'mock-1-2026',
    });
    expect(shown).toEqual(['Hello', ' world']);
  });

  it('usage without noCache: the uncached input is the total less cache reads and writes', async () => {
    const model = aiSdkModel(
      mock([
        {
          type: 'finish',
          finishReason: { unified: 'stop', raw: undefined },
          usage: {
            inputTokens: { total: 100, noCache: undefined, cacheRead: 30, cacheWrite: undefined },
            outputTokens: { total: undefined, text: 4, reasoning: undefined },
          },
        },
      ]),
    );
    const response = await model.generate(ask());
    expect(response.usage).toEqual({
      inputTokens: 70,
      outputTokens: 4,
      cacheReadTokens: 30,
      cacheWriteTokens: 0,
    });
    expect(response.model).toBe('mock-1');
  });

  it('usage: reasoning counted beside the output total (xAI over Chat Completions) is added back; inside it, not', async () => {
    const read = async (outputTokens: LanguageModelV4Usage['outputTokens'], raw?: Record<string, number>) =>
      (
        await aiSdkModel(
          mock([
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {
                inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
                outputTokens,
                ...(raw ? { raw } : {}),
              },
            },
          ]),
        ).generate(ask())
      ).usage;
    // More reasoning than the whole output: it cannot be a part of it.
    expect(await read({ total: 26, text: 0, reasoning: 227 })).toMatchObject({
      outputTokens: 26 + 227,
      reasoningTokens: 227,
    });
    // Less, but the raw Chat usage adds up only with the reasoning beside the completion.
    const beside = { prompt_tokens: 10, completion_tokens: 300, total_tokens: 410 };
    expect(await read({ total: 300, text: 200, reasoning: 100 }, beside)).toMatchObject({
      outputTokens: 400,
      reasoningTokens: 100,
    });
    const inside = { prompt_tokens: 10, completion_tokens: 300, total_tokens: 310 };
    expect(await read({ total: 300, text: 200, reasoning: 100 }, inside)).toMatchObject({
      outputTokens: 300,
      reasoningTokens: 100,
    });
    expect(await read({ total: 300, text: 200, reasoning: 100 })).toMatchObject({ outputTokens: 300 });
  });

  it('tool calls: arguments shown as they stream, input parsed from the tool-call part; "" is {} and bad JSON stays text', async () => {
    const progress: unknown[] = [];
    const model = aiSdkModel(
      mock([
        { type: 'tool-input-start', id: 'call_1', toolName: 'weather' },
        { type: 'tool-input-delta', id: 'call_1', delta: '{"city":"Pa' },
        { type: 'tool-input-delta', id: 'call_1', delta: 'ris"}' },
        { type: 'tool-input-end', id: 'call_1' },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: '{"city":"Paris"}' },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'now', input: '' },
        { type: 'tool-call', toolCallId: 'call_3', toolName: 'weather', input: '{"city":' },
        finish('tool-calls', 'tool_use'),
      ]),
      // The display is shared structure that later fragments update in place: keep a copy.
      { onToolInput: (update) => progress.push(structuredClone(update)) },
    );
    const response = await model.generate(ask());
    expect(response.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'now', input: {} },
      { type: 'tool_use', id: 'call_3', name: 'weather', input: undefined, inputText: '{"city":' },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(progress).toEqual([
      { callId: 'call_1', name: 'weather', display: { city: 'Pa' } },
      { callId: 'call_1', name: 'weather', display: { city: 'Paris' } },
    ]);
  });

  it('reasoning keeps its provider metadata (signature, redacted data) and goes back with it on the next call', async () => {
    const model = mock(
      [
        { type: 'reasoning-start', id: 'r0' },
        { type: 'reasoning-delta', id: 'r0', delta: 'Think' },
        {
          type: 'reasoning-delta',
          id: 'r0',
          delta: '',
          providerMetadata: { anthropic: { signature: 'sig-1' } },
        },
        { type: 'reasoning-end', id: 'r0' },
        { type: 'reasoning-start', id: 'r1', providerMetadata: { anthropic: { redactedData: 'opaque' } } },
        { type: 'reasoning-end', id: 'r1' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Done.' },
        { type: 'text-end', id: 't' },
        finish('stop', 'end_turn'),
      ],
      'anthropic.messages',
    );
    const response = await aiSdkModel(model).generate(ask());
    expect(response.content).toEqual([
      {
        type: 'thinking',
        thinking: 'Think',
        signature: 'sig-1',
        provider: 'anthropic',
        providerData: { providerMetadata: { anthropic: { signature: 'sig-1' } } },
      },
      { type: 'redacted_thinking', data: 'opaque', provider: 'anthropic' },
      { type: 'text', text: 'Done.' },
    ]);

    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: response.content },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ];
    await aiSdkModel(model).generate(ask({ messages }));
    expect(model.doStreamCalls[1]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Think', providerOptions: { anthropic: { signature: 'sig-1' } } },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
        { type: 'text', text: 'Done.' },
      ],
    });
  });

  it("another provider's thinking stays out of the request", async () => {
    const model = mock([finish('stop')], 'anthropic.messages');
    await aiSdkModel(model).generate(
      ask({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'o', provider: 'openai' },
              { type: 'text', text: 'a' },
            ],
          },
        ],
      }),
    );
    expect(model.doStreamCalls[0]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'a' }],
    });
  });

  it('provider-executed tool calls and results become provider blocks that go back as they came; the loop never runs them', async () => {
    const model = mock(
      [
        { type: 'tool-input-start', id: 'srv_1', toolName: 'web_search', providerExecuted: true },
        { type: 'tool-input-delta', id: 'srv_1', delta: '{"query":"reins"}' },
        { type: 'tool-input-end', id: 'srv_1' },
        {
          type: 'tool-call',
          toolCallId: 'srv_1',
          toolName: 'web_search',
          input: '{"query":"reins"}',
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'srv_1',
          toolName: 'web_search',
          result: [{ url: 'https://example.com' }],
        },
        { type: 'source', sourceType: 'url', id: 'src_1', url: 'https://example.com' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Found it.' },
        {
          type: 'text-end',
          id: 't',
          citations: [
            {
              source: { type: 'source', sourceType: 'url', id: 'src_1', url: 'https://example.com' },
              citedText: 'it',
            },
          ],
        },
        finish('stop', 'end_turn'),
      ],
      'anthropic.messages',
    );
    const response = await aiSdkModel(model).generate(ask());
    expect(
      response.content.map((block) => (block.type === 'provider' ? `provider:${block.kind}` : block.type)),
    ).toEqual(['provider:tool-call', 'provider:tool-result', 'provider:source', 'text']);
    expect(response.content[3]).toMatchObject({ citations: [{ citedText: 'it' }] });
    await aiSdkModel(model).generate(
      ask({ messages: [...ask().messages, { role: 'assistant', content: response.content }] }),
    );
    expect(model.doStreamCalls[1]?.prompt[1]?.content).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'srv_1',
        toolName: 'web_search',
        input: { query: 'reins' },
        providerExecuted: true,
      },
      {
        type: 'tool-result',
        toolCallId: 'srv_1',
        toolName: 'web_search',
        output: { type: 'json', value: [{ url: 'https://example.com' }] },
      },
      { type: 'text', text: 'Found it.' },
    ]);
  });

  it.each([
    ['stop', 'end_turn', 'end_turn'],
    ['stop', 'stop_sequence', 'stop_sequence'],
    ['stop', 'pause_turn', 'pause_turn'],
    ['tool-calls', 'tool_calls', 'tool_use'],
    ['length', 'max_tokens', 'max_tokens'],
    ['content-filter', 'content_filter', 'refusal'],
    ['other', 'model_context_window_exceeded', 'context_window_exceeded'],
    ['interrupted', undefined, 'interrupted'],
    ['error', 'error', 'other'],
    ['other', 'something_new', 'other'],
  ])('finish %s (raw %s) is %s', async (unified, raw, expected) => {
    const response = await aiSdkModel(mock([finish(unified, raw)])).generate(ask());
    expect(response.stopReason).toBe(expected);
  });

  it('an error part throws a StreamError with the provider type, message and status, even after output', async () => {
    const model = aiSdkModel(
      mock([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Half a sen' },
        {
          type: 'error',
          error: {
            type: 'overloaded_error',
            message: 'Overloaded',
            statusCode: 529,
            data: { type: 'overloaded_error', message: 'Overloaded' },
          },
        },
        finish('stop'),
      ]),
    );
    const error = await model.generate(ask()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamError);
    expect(error).toMatchObject({ type: 'overloaded_error', message: 'Overloaded', status: 529 });
    expect(classifyError(error)).toMatchObject({ kind: 'throttled', status: 529 });
  });

  it("an error part carrying the provider parser's JSONParseError is malformed_event (502), retried as on the native path", async () => {
    const parseError = new JSONParseError({
      text: '{"type":"response.created"',
      cause: new SyntaxError('bad'),
    });
    const error = await aiSdkModel(
      mock([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hi' },
        { type: 'error', error: parseError },
      ]),
    )
      .generate(ask())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamError);
    expect(error).toMatchObject({ type: 'malformed_event', status: 502, body: parseError });
    expect(classifyError(error)).toMatchObject({ kind: 'transient', status: 502 });
  });

  it('an error part that is a bare body gets its status from its type', async () => {
    const model = aiSdkModel(mock([{ type: 'error', error: { type: 'api_error', message: 'boom' } }]));
    await expect(model.generate(ask())).rejects.toMatchObject({
      name: 'StreamError',
      type: 'api_error',
      status: 500,
    });
  });

  it('a stream that ends without finish is interrupted; a call whose arguments never completed carries only its text', async () => {
    const response = await aiSdkModel(
      mock([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Calling.' },
        { type: 'tool-input-start', id: 'call_1', toolName: 'weather' },
        { type: 'tool-input-delta', id: 'call_1', delta: '{"city":"Pa' },
      ]),
    ).generate(ask());
    expect(response.stopReason).toBe('interrupted');
    expect(response.content).toEqual([
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'call_1', name: 'weather', input: undefined, inputText: '{"city":"Pa' },
    ]);
    // No finish, so no usage: the loop bills its estimate, never zero.
    expect(response.usage).toBeUndefined();
  });

  it('a stream that fails after output keeps what arrived, interrupted; one that fails before anything throws', async () => {
    // Chunks are read one by one, then the connection fails (`error()` on a queue would drop them).
    const failing = (before: LanguageModelV4StreamPart[]) =>
      new MockLanguageModelV4({
        doStream: async () => {
          const queue = [...before];
          return {
            stream: new ReadableStream<LanguageModelV4StreamPart>({
              pull(controller) {
                const part = queue.shift();
                if (part) controller.enqueue(part);
                else controller.error(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
              },
            }),
          };
        },
      });
    const partial = await aiSdkModel(
      failing([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hal' },
      ]),
    ).generate(ask());
    expect(partial).toMatchObject({ stopReason: 'interrupted', content: [{ type: 'text', text: 'Hal' }] });
    await expect(aiSdkModel(failing([])).generate(ask())).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('an abort is thrown, not read as a dropped connection', async () => {
    const controller = new AbortController();
    const model = new MockLanguageModelV4({
      doStream: async ({ abortSignal }) => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(stream) {
            stream.enqueue({ type: 'text-start', id: 't' });
            stream.enqueue({ type: 'text-delta', id: 't', delta: 'Hal' });
            abortSignal?.addEventListener('abort', () => stream.error(abortSignal.reason));
            controller.abort();
          },
        }),
      }),
    });
    const error = await aiSdkModel(model)
      .generate(ask({ signal: controller.signal }))
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(classifyError(error).kind).toBe('cancelled');
  });

  it('errors thrown by doStream keep their shape; classifyError reads APICallError.statusCode', async () => {
    const thrown = new APICallError({
      message: 'Too Many Requests',
      url: 'http://127.0.0.1/messages',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '2' },
      isRetryable: true,
    });
    const model = new MockLanguageModelV4({
      doStream: async () => {
        throw thrown;
      },
    });
    const error = await aiSdkModel(model)
      .generate(ask())
      .catch((caught: unknown) => caught);
    expect(error).toBe(thrown);
    expect(classifyError(error)).toMatchObject({ kind: 'throttled', status: 429, reason: 'status 429' });
  });

  // APICallError keeps its headers in `responseHeaders`, which classifyError reads.
  it('classifyError honours Retry-After from APICallError.responseHeaders', () => {
    const error = new APICallError({
      message: 'Too Many Requests',
      url: 'http://127.0.0.1/messages',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '2' },
    });
    expect(classifyError(error)).toMatchObject({ kind: 'throttled', status: 429, retryAfterMs: 2_000 });
  });

  // The parsed error body is the APICallError's `data`: a quota code there is billing, not load.
  it('classifyError reads the error code in APICallError.data: a 429 insufficient_quota is terminal', () => {
    const error = new APICallError({
      message: 'You exceeded your current quota',
      url: 'http://127.0.0.1/v1/responses',
      requestBodyValues: {},
      statusCode: 429,
      data: {
        error: {
          message: 'You exceeded your current quota',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      },
    });
    expect(classifyError(error)).toMatchObject({
      kind: 'terminal',
      status: 429,
      reason: 'insufficient_quota',
    });
  });

  it('maps the request: system, user media, tool calls and results (named, errors, attachments), tools, choice, sampling, signal', async () => {
    const model = mock([finish('stop')]);
    const signal = new AbortController().signal;
    await aiSdkModel(model, { settings: { temperature: 0.2, stopSequences: ['END'] } }).generate({
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0K' } },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' }, title: 'a.pdf' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'shot', input: {} },
            { type: 'tool_use', id: 'call_3', name: 'weather', input: undefined, inputText: '{' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'call_1', content: '18°C', isError: false },
            {
              type: 'tool_result',
              toolUseId: 'call_2',
              content: 'screenshot',
              isError: false,
              attachments: [
                { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'AAAA' } },
              ],
            },
            { type: 'tool_result', toolUseId: 'call_3', content: 'bad arguments', isError: true },
            { type: 'text', text: 'Go on.' },
          ],
        },
      ],
      tools: [{ name: 'weather', description: 'Weather.', inputSchema: { type: 'object' } }],
      toolChoice: { name: 'weather' },
      maxOutputTokens: 512,
      settings: { topP: 0.9, providerOptions: { mock: { seedish: 7 } } },
      signal,
    });
    const call = model.doStreamCalls[0] as LanguageModelV4CallOptions;
    expect(call).toEqual({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0K' } },
            {
              type: 'file',
              mediaType: 'application/pdf',
              data: { type: 'url', url: new URL('https://example.com/a.pdf') },
              filename: 'a.pdf',
            },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: { city: 'Paris' } },
            { type: 'tool-call', toolCallId: 'call_2', toolName: 'shot', input: {} },
            { type: 'tool-call', toolCallId: 'call_3', toolName: 'weather', input: {} },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call_1',
              toolName: 'weather',
              output: { type: 'text', value: '18°C' },
            },
            {
              type: 'tool-result',
              toolCallId: 'call_2',
              toolName: 'shot',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'screenshot' },
                  { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AAAA' } },
                ],
              },
            },
            {
              type: 'tool-result',
              toolCallId: 'call_3',
              toolName: 'weather',
              output: { type: 'error-text', value: 'bad arguments' },
            },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
      ],
      maxOutputTokens: 512,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
      abortSignal: signal,
      tools: [
        { type: 'function', name: 'weather', description: 'Weather.', inputSchema: { type: 'object' } },
      ],
      toolChoice: { type: 'tool', toolName: 'weather' },
      providerOptions: { mock: { seedish: 7 } },
    });
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    ['required', { type: 'required' }],
  ] as const)('toolChoice %s', async (choice, expected) => {
    const model = mock([finish('stop')]);
    await aiSdkModel(model).generate(
      ask({ tools: [{ name: 'a', description: 'A.', inputSchema: { type: 'object' } }], toolChoice: choice }),
    );
    expect(model.doStreamCalls[0]?.toolChoice).toEqual(expected);
  });

  it('no tools: neither tools nor a tool choice is sent', async () => {
    const model = mock([finish('stop')]);
    await aiSdkModel(model).generate(ask({ toolChoice: 'none' }));
    expect(model.doStreamCalls[0]).not.toHaveProperty('tools');
    expect(model.doStreamCalls[0]).not.toHaveProperty('toolChoice');
  });

  it('Anthropic: thinking budget, parallel switch and cache breakpoints go to providerOptions.anthropic; effort to V4 reasoning', async () => {
    const model = mock([finish('stop')], 'anthropic.messages');
    await aiSdkModel(model, { settings: { thinking: { budgetTokens: 2_000, effort: 'high' } } }).generate(
      ask({
        system: 'Sys.',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'one' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
          { role: 'user', content: [{ type: 'text', text: 'three' }] },
        ],
        tools: [
          { name: 'a', description: 'A.', inputSchema: { type: 'object' } },
          { name: 'b', description: 'B.', inputSchema: { type: 'object' } },
        ],
        settings: {
          parallelToolCalls: false,
          cache: { ttl: '1h', messages: 'last' },
          providerOptions: { anthropic: { sendReasoning: true } },
        },
      }),
    );
    const call = model.doStreamCalls[0] as LanguageModelV4CallOptions;
    const breakpoint = { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } };
    expect(call.reasoning).toBe('high');
    expect(call.providerOptions).toEqual({
      anthropic: {
        thinking: { type: 'enabled', budgetTokens: 2_000 },
        disableParallelToolUse: true,
        sendReasoning: true,
      },
    });
    expect(call.prompt.map((message) => message.providerOptions)).toEqual([
      breakpoint,
      undefined,
      undefined,
      breakpoint,
    ]);
    expect(
      call.tools?.map((definition) => (definition as { providerOptions?: unknown }).providerOptions),
    ).toEqual([undefined, breakpoint]);
  });

  it('OpenAI: effort to reasoning, the parallel switch and the cache key to providerOptions.openai', async () => {
    const model = mock([finish('stop')], 'openai.responses');
    await aiSdkModel(model).generate(
      ask({ settings: { thinking: { effort: 'low' }, parallelToolCalls: true, cache: { key: 'tenant-1' } } }),
    );
    expect(model.doStreamCalls[0]).toMatchObject({
      reasoning: 'low',
      providerOptions: { openai: { parallelToolCalls: true, promptCacheKey: 'tenant-1' } },
    });
  });

  it('thinking: false is V4 reasoning "none"', async () => {
    const model = mock([finish('stop')], 'google.generative-ai');
    await aiSdkModel(model).generate(ask({ settings: { thinking: false } }));
    expect(model.doStreamCalls[0]?.reasoning).toBe('none');
  });

  it.each([
    [{ thinking: { budgetTokens: 1_000 } }, 'settings.thinking.budgetTokens'],
    [{ parallelToolCalls: false }, 'settings.parallelToolCalls'],
    [{ cache: {} }, 'settings.cache'],
  ])(
    'a setting with no place at an unknown provider is a labeled ConfigurationError: %j',
    async (settings, option) => {
      const model = mock([finish('stop')], 'google.generative-ai');
      const error = await aiSdkModel(model, { settings })
        .generate(ask())
        .catch((caught: unknown) => caught);
      expect(isConfigurationError(error)).toBe(true);
      expect(error).toMatchObject({
        option,
        message: expect.stringContaining('settings.providerOptions.google'),
      });
      expect(model.doStreamCalls).toHaveLength(0);
    },
  );

  it('a LanguageModelV2 is refused at construction, by name', () => {
    expect(() =>
      aiSdkModel({ specificationVersion: 'v2', provider: 'old', modelId: 'x' } as never),
    ).toThrowError(/LanguageModelV4 or V3/);
  });
});

describe('aiSdkModel with a LanguageModelV3 (AI SDK 6 providers)', () => {
  it('files are sent in the V3 shape, V4-only fields are left out, and the stream reads the same', async () => {
    const model = new MockLanguageModelV3({
      provider: 'openai.chat',
      modelId: 'v3-model',
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'ok' },
            { type: 'text-end', id: 't' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: usage(),
            },
          ],
          initialDelayInMs: null,
          chunkDelayInMs: null,
        }),
      }),
    });
    const response = await aiSdkModel(model, { settings: { thinking: { effort: 'medium' } } }).generate(
      ask({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
              {
                type: 'tool_result',
                toolUseId: 'c',
                content: 'page',
                isError: false,
                attachments: [
                  {
                    type: 'document',
                    source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBE' },
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect(response).toMatchObject({ content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' });
    const call = model.doStreamCalls[0];
    expect(call).not.toHaveProperty('reasoning');
    expect(call?.providerOptions).toEqual({ openai: { reasoningEffort: 'medium' } });
    expect(call?.prompt).toEqual([
      {
        role: 'user',
        content: [{ type: 'file', mediaType: 'image/*', data: new URL('https://example.com/cat.png') }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: '',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'page' },
                { type: 'file-data', data: 'JVBE', mediaType: 'application/pdf' },
              ],
            },
          },
        ],
      },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// A real provider package: @ai-sdk/anthropic against a loopback server replaying recorded streams.

const recorded = (name: string) => {
  const stream = anthropicStreams().find((candidate) => candidate.name === `vercel/anthropic/${name}`);
  if (!stream) throw new Error(`no recorded stream ${name}`);
  return stream;
};
const anthropicAt = (url: string) => createAnthropic({ baseURL: url, apiKey: 'test' })('claude-sonnet-4-5');
const toolsFor = (names: string[]) =>
  names.map((name) => ({ name, description: `${name}.`, inputSchema: { type: 'object' } }));

/** An Anthropic turn: signed thinking, then a weather call. */
const thinkingToolTurn: Reply = {
  kind: 'sse',
  format: 'anthropic',
  events: [
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        usage: {
          input_tokens: 90,
          cache_read_input_tokens: 400,
          cache_creation_input_tokens: 0,
          output_tokens: 1,
        },
      },
    },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'thinking_delta', thinking: 'Need the weather.' },
    },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: 'sig-weather' },
    },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} },
    },
    {
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '{"location": "San' },
    },
    {
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: ' Francisco"}' },
    },
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 40 } },
    { type: 'message_stop' },
  ],
};

describe('aiSdkModel over @ai-sdk/anthropic, on recorded Anthropic streams, agrees with streamText', () => {
  it.each([
    ['anthropic-text.chunks.txt', []],
    ['anthropic-json-other-tool.1.chunks.txt', ['weather']],
    ['anthropic-tool-no-args.chunks.txt', ['updateIssueList']],
    ['anthropic-clear-thinking.1.chunks.txt', []],
  ])('%s', async (name, toolNames) => {
    const { sse } = recorded(name);
    const server = await startProviderServer([
      { kind: 'raw', body: sse },
      { kind: 'raw', body: sse },
    ]);
    try {
      const ours = await aiSdkModel(anthropicAt(server.url)).generate(
        ask({ tools: toolsFor(toolNames), toolChoice: 'auto' }),
      );
      const theirs = streamText({
        model: anthropicAt(server.url),
        prompt: 'hi',
        tools: Object.fromEntries(
          toolNames.map((toolName) => [toolName, tool({ inputSchema: jsonSchema({ type: 'object' }) })]),
        ),
      });
      const [text, toolCalls, finishReason, rawFinishReason, sdkUsage, response, reasoning] =
        await Promise.all([
          theirs.text,
          theirs.toolCalls,
          theirs.finishReason,
          theirs.rawFinishReason,
          theirs.usage,
          theirs.response,
          theirs.reasoning,
        ]);

      expect(
        ours.content
          .filter((block) => block.type === 'text')
          .map((block) => block.text)
          .join(''),
      ).toBe(text);
      expect(ours.content.filter((block) => block.type === 'tool_use')).toEqual(
        toolCalls.map((call) => ({
          type: 'tool_use',
          id: call.toolCallId,
          name: call.toolName,
          input: call.input,
        })),
      );
      const stopReasons: Record<string, string> = { stop: 'end_turn', 'tool-calls': 'tool_use' };
      expect([ours.stopReason, rawFinishReason]).toEqual([stopReasons[finishReason], rawFinishReason]);
      expect(ours.usage).toMatchObject({
        inputTokens: sdkUsage.inputTokenDetails.noCacheTokens,
        cacheReadTokens: sdkUsage.inputTokenDetails.cacheReadTokens,
        cacheWriteTokens: sdkUsage.inputTokenDetails.cacheWriteTokens,
        outputTokens: sdkUsage.outputTokens,
      });
      expect([ours.id, ours.model]).toEqual([response.id, response.modelId]);
      expect(
        ours.content
          .filter((block) => block.type === 'thinking')
          .map((block) => ({ text: block.thinking, signature: block.signature })),
      ).toEqual(
        reasoning.map((part) => ({
          text: part.type === 'reasoning' ? part.text : undefined,
          signature: (part.providerMetadata?.['anthropic'] as { signature?: string } | undefined)?.signature,
        })),
      );
    } finally {
      await server.close();
    }
  });

  it('the zero-argument tool call is input {} and tool_use, so the loop runs it', async () => {
    const server = await startProviderServer([
      { kind: 'raw', body: recorded('anthropic-tool-no-args.chunks.txt').sse },
    ]);
    try {
      const response = await aiSdkModel(anthropicAt(server.url)).generate(
        ask({ tools: toolsFor(['updateIssueList']) }),
      );
      expect(response.stopReason).toBe('tool_use');
      expect(response.content).toContainEqual({
        type: 'tool_use',
        id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP',
        name: 'updateIssueList',
        input: {},
      });
    } finally {
      await server.close();
    }
  });

  it('an overloaded error inside the stream after output is a StreamError the retry layer sees as 529', async () => {
    const text = recorded('anthropic-text.chunks.txt').sse;
    const cut = text.indexOf('event: content_block_stop');
    const body = `${text.slice(0, cut)}event: error\ndata: ${JSON.stringify({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    })}\n\n`;
    const server = await startProviderServer([{ kind: 'raw', body }]);
    try {
      const error = await aiSdkModel(anthropicAt(server.url))
        .generate(ask())
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({
        name: 'StreamError',
        type: 'overloaded_error',
        message: 'Overloaded',
        status: 529,
      });
      expect(classifyError(error)).toMatchObject({ kind: 'throttled', status: 529 });
    } finally {
      await server.close();
    }
  });

  it('an HTTP 429 reaches the loop as the APICallError the provider threw; classifyError reads its status', async () => {
    const server = await startProviderServer([
      {
        kind: 'error',
        status: 429,
        headers: { 'retry-after': '3' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
      },
    ]);
    try {
      const error = await aiSdkModel(anthropicAt(server.url))
        .generate(ask())
        .catch((caught: unknown) => caught);
      expect(APICallError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        statusCode: 429,
        isRetryable: true,
        responseHeaders: { 'retry-after': '3' },
      });
      expect(classifyError(error)).toMatchObject({ kind: 'throttled', status: 429 });
    } finally {
      await server.close();
    }
  });

  it('a stream cut mid-arguments is interrupted; the call carries only its text', async () => {
    const { sse } = recorded('anthropic-json-other-tool.1.chunks.txt');
    const server = await startProviderServer([{ kind: 'raw', body: sse, cutAt: sse.indexOf('"}"}}') }]);
    try {
      const response = await aiSdkModel(anthropicAt(server.url)).generate(
        ask({ tools: toolsFor(['weather']) }),
      );
      expect(response.stopReason).toBe('interrupted');
      // Besides the provider's own `anthropic.message_start` custom part, kept as the AI SDK keeps it.
      expect(response.content.filter((block) => block.type !== 'provider')).toEqual([
        {
          type: 'tool_use',
          id: 'toolu_019Zvehfe1XQWweT1pm7okyt',
          name: 'weather',
          input: undefined,
          inputText: '{"location": "San Francisco',
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('runAgent end to end: thinking and a tool call, the tool runs, the second request holds the result and the signature', async () => {
    const server = await startProviderServer([
      thinkingToolTurn,
      { kind: 'raw', body: recorded('anthropic-text.chunks.txt').sse },
    ]);
    const asked: unknown[] = [];
    try {
      const result = await runAgent({
        model: aiSdkModel(anthropicAt(server.url), {
          settings: { thinking: { budgetTokens: 1_024 }, cache: {} },
        }),
        input: 'Weather in San Francisco?',
        system: 'Be brief.',
        tools: [
          defineTool({
            name: 'weather',
            description: 'Current weather.',
            effect: 'read',
            input: z.object({ location: z.string() }),
            execute: (input) => {
              asked.push(input);
              return { temperatureC: 14 };
            },
          }),
        ],
      });
      expect(result.outcome).toEqual({
        kind: 'answered',
        text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
      });
      expect(asked).toEqual([{ location: 'San Francisco' }]);
      expect(result.usage).toMatchObject({
        inputTokens: 90 + 12,
        cacheReadTokens: 400,
        outputTokens: 40 + 30,
      });

      const first = server.requests[0]?.body as Record<string, unknown>;
      expect(first['thinking']).toEqual({ type: 'enabled', budget_tokens: 1_024 });
      expect(first['system']).toEqual([
        { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      ]);
      expect((first['tools'] as { cache_control?: unknown }[]).at(-1)?.cache_control).toEqual({
        type: 'ephemeral',
      });

      const second = server.requests[1]?.body as { messages: { role: string; content: unknown[] }[] };
      expect(second.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need the weather.', signature: 'sig-weather' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { location: 'San Francisco' } },
        ],
      });
      expect(second.messages[2]?.role).toBe('user');
      expect(second.messages[2]?.content).toContainEqual(
        expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_1', content: expect.any(String) }),
      );
    } finally {
      await server.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Switching models mid-run: blocks one adapter made must reach another adapter only in a shape it sends.

/** Content block types this conversation may send to the Messages API. */
const messagesApiBlockTypes = new Set(['text', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result']);

const weatherTool = () =>
  defineTool({
    name: 'weather',
    description: 'Current weather.',
    effect: 'read',
    input: z.object({ location: z.string() }),
    execute: () => ({ temperatureC: 14 }),
  });

/** Routes the first call to `first` and every later one to `then`. */
const switchAfterFirstCall = (then: () => Model) => {
  let calls = 0;
  return () => (calls++ === 0 ? undefined : { model: then() });
};

const nativeAnthropicAt = (url: string) =>
  anthropicModel(new Anthropic({ apiKey: 't', baseURL: url, maxRetries: 0 }), { model: 'claude-sonnet-4-5' });

describe('switching between aiSdkModel and the native adapters mid-run', () => {
  it('@ai-sdk/anthropic then anthropicModel: the second request holds Messages API blocks only, and the signed thinking', async () => {
    const server = await startProviderServer([
      thinkingToolTurn,
      { kind: 'raw', body: recorded('anthropic-text.chunks.txt').sse },
    ]);
    try {
      const result = await runAgent({
        model: aiSdkModel(anthropicAt(server.url), { settings: { thinking: { budgetTokens: 1_024 } } }),
        prepareStep: switchAfterFirstCall(() => nativeAnthropicAt(server.url)),
        input: 'Weather in San Francisco?',
        tools: [weatherTool()],
      });
      expect(result.outcome.kind).toBe('answered');
      // The AI SDK turn kept its own parts (Anthropic's message_start marker among them).
      const turn = result.messages[1];
      expect(turn?.content).toContainEqual(expect.objectContaining({ type: 'provider', kind: 'custom' }));

      const second = server.requests[1]?.body as {
        messages: { role: string; content: { type: string }[] }[];
      };
      expect(JSON.stringify(second)).not.toMatch(/providerOptions|"custom"|anthropic\.message_start/);
      const types = second.messages.flatMap((message) => message.content.map((block) => block.type));
      expect(types.filter((type) => !messagesApiBlockTypes.has(type))).toEqual([]);
      expect(second.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need the weather.', signature: 'sig-weather' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { location: 'San Francisco' } },
        ],
      });
    } finally {
      await server.close();
    }
  });

  it('anthropicModel then @ai-sdk/anthropic: the signed thinking and the call go over, server-tool wire blocks do not', async () => {
    const nativeTurn: Reply = {
      kind: 'sse',
      format: 'anthropic',
      events: [
        {
          type: 'message_start',
          message: {
            id: 'msg_n',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-5',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 50, output_tokens: 1 },
          },
        },
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        },
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'thinking_delta', thinking: 'Search first.' },
        },
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'signature_delta', signature: 'sig-native' },
        },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
        },
        {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: '{"query":"weather"}' },
        },
        { type: 'content_block_stop', index: 1 },
        {
          type: 'content_block_start',
          index: 2,
          content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        },
        { type: 'content_block_stop', index: 2 },
        {
          type: 'content_block_start',
          index: 3,
          content_block: { type: 'tool_use', id: 'toolu_n', name: 'weather', input: {} },
        },
        {
          type: 'content_block_delta',
          index: 3,
          delta: { type: 'input_json_delta', partial_json: '{"location":"Paris"}' },
        },
        { type: 'content_block_stop', index: 3 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } },
        { type: 'message_stop' },
      ],
    };
    const server = await startProviderServer([
      nativeTurn,
      { kind: 'raw', body: recorded('anthropic-text.chunks.txt').sse },
    ]);
    try {
      const result = await runAgent({
        model: nativeAnthropicAt(server.url),
        prepareStep: switchAfterFirstCall(() => aiSdkModel(anthropicAt(server.url))),
        input: 'Weather in Paris?',
        tools: [weatherTool()],
      });
      expect(result.outcome.kind).toBe('answered');
      expect(result.messages[1]?.content).toContainEqual(
        expect.objectContaining({ type: 'provider', provider: 'anthropic', kind: 'server_tool_use' }),
      );

      const second = server.requests[1]?.body as {
        messages: { role: string; content: { type: string }[] }[];
      };
      const types = second.messages.flatMap((message) => message.content.map((block) => block.type));
      expect(types.filter((type) => !messagesApiBlockTypes.has(type))).toEqual([]);
      expect(second.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Search first.', signature: 'sig-native' },
          { type: 'tool_use', id: 'toolu_n', name: 'weather', input: { location: 'Paris' } },
        ],
      });
    } finally {
      await server.close();
    }
  });

  it('@ai-sdk/openai blocks are tagged ai-sdk:openai: openAIResponsesModel sends none of them, the AI SDK model gets them back', async () => {
    const model = mock(
      [
        { type: 'reasoning-start', id: 'rs_1', providerMetadata: { openai: { itemId: 'rs_1' } } },
        { type: 'reasoning-delta', id: 'rs_1', delta: 'Plan.' },
        {
          type: 'reasoning-end',
          id: 'rs_1',
          providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc' } },
        },
        {
          type: 'tool-call',
          toolCallId: 'ws_1',
          toolName: 'web_search',
          input: '{}',
          providerExecuted: true,
          providerMetadata: { openai: { itemId: 'ws_1' } },
        },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Sunny.' },
        { type: 'text-end', id: 't' },
        finish('stop'),
      ],
      'openai.responses',
    );
    const response = await aiSdkModel(model).generate(ask());
    expect(response.content.map((block) => ('provider' in block ? block.provider : block.type))).toEqual([
      'ai-sdk:openai',
      'ai-sdk:openai',
      'text',
    ]);
    const messages: Message[] = [...ask().messages, { role: 'assistant', content: response.content }];

    expect(toResponsesInput(messages)).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { role: 'assistant', content: 'Sunny.' },
    ]);
    await aiSdkModel(model).generate(ask({ messages }));
    expect(model.doStreamCalls[1]?.prompt[1]?.content).toEqual([
      {
        type: 'reasoning',
        text: 'Plan.',
        providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc' } },
      },
      {
        type: 'tool-call',
        toolCallId: 'ws_1',
        toolName: 'web_search',
        input: {},
        providerExecuted: true,
        providerOptions: { openai: { itemId: 'ws_1' } },
      },
      { type: 'text', text: 'Sunny.' },
    ]);
  });

  it('a provider block another AI SDK provider made stays out of the request', async () => {
    const model = mock([finish('stop')], 'anthropic.messages');
    const foreign = { type: 'custom', kind: 'openai.marker' } as const;
    await aiSdkModel(model).generate(
      ask({
        messages: [
          ...ask().messages,
          {
            role: 'assistant',
            content: [
              { type: 'provider', provider: 'ai-sdk:openai', kind: 'custom', raw: foreign },
              // What the native Anthropic adapter made is wire format, not an AI SDK part.
              { type: 'provider', provider: 'anthropic', kind: 'custom', raw: foreign },
              { type: 'text', text: 'a' },
            ],
          },
        ],
      }),
    );
    expect(model.doStreamCalls[0]?.prompt[1]?.content).toEqual([{ type: 'text', text: 'a' }]);
  });
});

describe('settings the AI SDK path would send wrong, or drop, are ConfigurationErrors', () => {
  const threeMessages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'one' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
    { role: 'user', content: [{ type: 'text', text: 'three' }] },
  ];
  const oneTool = [{ name: 'a', description: 'A.', inputSchema: { type: 'object' } }];

  it.each([
    [{ cache: { messages: [99] } }, undefined, 'settings.cache.messages', /no message at index 99/],
    [{ cache: { messages: [-1] } }, undefined, 'settings.cache.messages', /array of message indices/],
    [
      { cache: { messages: [0, 1, 2] } },
      undefined,
      'settings.cache.messages',
      /at most 4 cache breakpoints.*2 are on system and tools/,
    ],
    [
      { thinking: { budgetTokens: -5 } },
      undefined,
      'settings.thinking.budgetTokens',
      /whole number of tokens ≥ 1/,
    ],
    [{ thinking: { budgetTokens: 1_500.5 } }, undefined, 'settings.thinking.budgetTokens', /whole number/],
    [
      { thinking: { budgetTokens: 2_000 } },
      2_000,
      'settings.thinking.budgetTokens',
      /less than maxOutputTokens/,
    ],
  ] as const)('Anthropic %j (maxOutputTokens %s): %s', async (settings, maxOutputTokens, option, message) => {
    const model = mock([finish('stop')], 'anthropic.messages');
    const error = await aiSdkModel(model)
      .generate(
        ask({
          system: 'Sys.',
          messages: threeMessages,
          tools: oneTool,
          settings: settings as ModelSettings,
          ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
        }),
      )
      .catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect(error).toMatchObject({ option, message: expect.stringMatching(message) });
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it('four breakpoints fit; a budget under maxOutputTokens is sent', async () => {
    const model = mock([finish('stop')], 'anthropic.messages');
    await aiSdkModel(model).generate(
      ask({
        system: 'Sys.',
        messages: threeMessages,
        tools: oneTool,
        maxOutputTokens: 2_000,
        settings: { cache: { messages: [0, 2] }, thinking: { budgetTokens: 1_024 } },
      }),
    );
    const call = model.doStreamCalls[0] as LanguageModelV4CallOptions;
    expect(call.prompt.map((message) => message.providerOptions !== undefined)).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(call.providerOptions?.['anthropic']?.['thinking']).toEqual({
      type: 'enabled',
      budgetTokens: 1_024,
    });
  });

  it('a breakpoint on a message that sends nothing here goes on the message before it (the same prefix)', async () => {
    const model = mock([finish('stop')], 'anthropic.messages');
    await aiSdkModel(model).generate(
      ask({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'one' }] },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'o', provider: 'openai' }] },
          { role: 'user', content: [{ type: 'text', text: 'three' }] },
        ],
        settings: { cache: { messages: [1] } },
      }),
    );
    const call = model.doStreamCalls[0] as LanguageModelV4CallOptions;
    expect(call.prompt.map((message) => message.providerOptions)).toEqual([
      { anthropic: { cacheControl: { type: 'ephemeral' } } },
      undefined,
    ]);
  });
});
