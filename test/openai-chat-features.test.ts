import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../src/index.js';
import type { Message } from '../src/model/content.js';
import type { ModelRequest, ModelResponse, ModelSettings } from '../src/model/model.js';
import { type OpenAIModelOptions, openAIModel } from '../src/openai/index.js';
import { classifyError, retryingModel } from '../src/resilience/index.js';
import { assembleOpenAIChatStream, type OpenAIChatChunk, StreamError } from '../src/stream/index.js';
import { startProviderServer } from './support/provider-server.js';
import { eventsOf } from './support/recorded-streams.js';

/**
 * Request features of `openAIModel` through the real `openai` SDK against a loopback server (the
 * wire body the server received is the assertion), and stream shapes no recording covers, read on
 * both paths (the assembler directly, and the SDK replaying the same chunks).
 */
let server: Awaited<ReturnType<typeof startProviderServer>>;
const client = () => new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
beforeAll(async () => {
  server = await startProviderServer([]);
});
afterAll(() => server.close());

const sse = (chunks: readonly unknown[]) =>
  `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;
const chunk = (delta: object, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'gpt-test',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const answer = sse([chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')]);

const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
const weather = {
  name: 'weather',
  description: 'Weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
};

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return { system: '', messages: hello, tools: [], toolChoice: 'auto', ...over };
}

/** The body the SDK sent for one call. */
async function wireBody(
  over: Partial<ModelRequest> = {},
  options: Partial<OpenAIModelOptions> = {},
): Promise<Record<string, unknown>> {
  const before = server.requests.length;
  server.replies.push({ kind: 'raw', body: answer });
  await openAIModel(client(), { model: 'gpt-test', ...options }).generate(request(over));
  return server.requests[before]?.body as Record<string, unknown>;
}

async function configurationError(over: Partial<ModelRequest>): Promise<unknown> {
  const before = server.requests.length;
  const error = await openAIModel(client(), { model: 'gpt-test' })
    .generate(request(over))
    .catch((thrown: unknown) => thrown);
  // Labeled before anything is sent.
  expect(server.requests.length).toBe(before);
  return error;
}

describe('openAIModel request features, on the wire', () => {
  it.each([
    ['auto', 'auto'],
    ['none', 'none'],
    ['required', 'required'],
    [{ name: 'weather' }, { type: 'function', function: { name: 'weather' } }],
  ] as const)('toolChoice %j is tool_choice %j', async (toolChoice, wire) => {
    const body = await wireBody({ tools: [weather], toolChoice });
    expect(body['tool_choice']).toEqual(wire);
  });

  it('parallelToolCalls is parallel_tool_calls, sent only with tools', async () => {
    const settings: ModelSettings = { parallelToolCalls: false };
    expect((await wireBody({ tools: [weather], settings }))['parallel_tool_calls']).toBe(false);
    const without = await wireBody({ settings });
    expect(without).not.toHaveProperty('parallel_tool_calls');
    expect(without).not.toHaveProperty('tool_choice');
  });

  it('stop sequences, temperature, top-p and the output limit', async () => {
    const body = await wireBody({
      maxOutputTokens: 300,
      settings: { stopSequences: ['END', '###'], temperature: 0.2, topP: 0.9 },
    });
    expect(body).toMatchObject({
      stop: ['END', '###'],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 300,
    });
  });

  it('thinking.effort is reasoning_effort; thinking: false sends nothing', async () => {
    expect((await wireBody({ settings: { thinking: { effort: 'high' } } }))['reasoning_effort']).toBe('high');
    expect(await wireBody({ settings: { thinking: false } })).not.toHaveProperty('reasoning_effort');
  });

  it('thinking.budgetTokens is a labeled ConfigurationError: Chat has no thinking budget', async () => {
    const error = await configurationError({ settings: { thinking: { budgetTokens: 2048 } } });
    expect(error).toMatchObject({
      name: 'ConfigurationError',
      option: 'settings.thinking.budgetTokens',
      message: expect.stringContaining('settings.thinking.effort'),
    });
  });

  it('cache.key is prompt_cache_key and ttl 1h is extended retention; breakpoints are accepted and change nothing', async () => {
    const body = await wireBody({
      settings: { cache: { key: 'tenant-7', ttl: '1h', system: true, tools: true, messages: 'last' } },
    });
    expect(body).toMatchObject({ prompt_cache_key: 'tenant-7', prompt_cache_retention: '24h' });
    const plain = await wireBody({ settings: { cache: { system: true, messages: [0] } } });
    const bare = await wireBody();
    expect(plain).toEqual(bare);
  });

  it('adapter settings sit under request settings; providerOptions.openai is merged into the body last', async () => {
    const body = await wireBody(
      {
        settings: {
          temperature: 0.7,
          providerOptions: { openai: { temperature: 0, service_tier: 'flex' }, anthropic: { top_k: 5 } },
        },
      },
      { settings: { temperature: 0.1, topP: 0.5, providerOptions: { openai: { user: 'u-1' } } } },
    );
    expect(body).toMatchObject({ temperature: 0, top_p: 0.5, service_tier: 'flex', user: 'u-1' });
    expect(body).not.toHaveProperty('top_k');
  });

  it('user images become image_url parts (base64 as a data: URL) and PDFs become file parts', async () => {
    const body = await wireBody({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0K' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            {
              type: 'document',
              title: 'q3.pdf',
              source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' },
            },
          ],
        },
      ],
    });
    expect(body['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'file', file: { filename: 'q3.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
        ],
      },
    ]);
  });

  it('a document Chat cannot take (a URL PDF, plain text) is a labeled ConfigurationError', async () => {
    const error = await configurationError({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read it.' },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
          ],
        },
      ],
    });
    expect(error).toMatchObject({ name: 'ConfigurationError', option: 'messages[0].content[1].source' });
  });

  it('tool results go as text; their images follow in one user message naming the call', async () => {
    const body = await wireBody({
      messages: [
        ...hello,
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'call_1', name: 'screenshot', input: {} }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              toolUseId: 'call_1',
              content: 'Captured.',
              isError: false,
              attachments: [
                { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'AAAA' } },
              ],
            },
          ],
        },
      ],
    });
    expect((body['messages'] as unknown[]).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Captured.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Attachments of tool result call_1:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ]);
  });

  it('assistant turns send text joined with nothing and tool calls; thinking and provider blocks stay out', async () => {
    const body = await wireBody({
      system: 'Be brief.',
      messages: [
        ...hello,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig', provider: 'anthropic' },
            { type: 'redacted_thinking', data: 'xyz', provider: 'anthropic' },
            { type: 'provider', provider: 'anthropic', kind: 'server_tool_use', raw: { id: 'srv_1' } },
            { type: 'text', text: 'The capital is ' },
            { type: 'text', text: 'Copenhagen.' },
            { type: 'tool_use', id: 'call_2', name: 'weather', input: { city: 'Copenhagen' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'thinking', thinking: 'only this', provider: 'openai-compatible' }],
        },
      ],
    });
    expect(body['messages']).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'The capital is Copenhagen.',
        tool_calls: [
          {
            id: 'call_2',
            type: 'function',
            function: { name: 'weather', arguments: '{"city":"Copenhagen"}' },
          },
        ],
      },
    ]);
  });
});

/** One stream read both ways: the assembler fed the chunks, and the SDK replaying their bytes. */
async function bothPaths(chunks: readonly unknown[]): Promise<[ModelResponse, ModelResponse]> {
  const direct = await assembleOpenAIChatStream(eventsOf(chunks as OpenAIChatChunk[]));
  server.replies.push({ kind: 'raw', body: sse(chunks) });
  const viaSdk = await openAIModel(client(), { model: 'gpt-test' }).generate(request());
  return [direct, viaSdk];
}

async function bothErrors(chunks: readonly unknown[]): Promise<[unknown, unknown]> {
  const direct = await assembleOpenAIChatStream(eventsOf(chunks as OpenAIChatChunk[])).catch(
    (thrown: unknown) => thrown,
  );
  server.replies.push({ kind: 'raw', body: sse(chunks) });
  const viaSdk = await openAIModel(client(), { model: 'gpt-test' })
    .generate(request())
    .catch((thrown: unknown) => thrown);
  return [direct, viaSdk];
}

const call = (fields: object) => chunk({ tool_calls: [fields] });

describe('stream shapes no recording covers, on both paths', () => {
  it('a tool name resent in every chunk is the name, not the name repeated (the SDK assigns it)', async () => {
    const chunks = [
      call({ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }),
      call({ index: 0, function: { name: 'weather', arguments: '{"city":' } }),
      call({ index: 0, function: { name: 'weather', arguments: '"Oslo"}' } }),
      chunk({}, 'tool_calls'),
    ];
    for (const response of await bothPaths(chunks))
      expect(response.content).toEqual([
        { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } },
      ]);
  });

  it("tool calls without `index` (Gemini's endpoint) are kept: a new id is a new call", async () => {
    const chunks = [
      call({ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }),
      call({ id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }),
      chunk({}, 'tool_calls'),
    ];
    for (const response of await bothPaths(chunks)) {
      expect(response.stopReason).toBe('tool_use');
      expect(response.content).toEqual([
        { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Oslo' } },
        { type: 'tool_use', id: 'call_b', name: 'weather', input: { city: 'Rome' } },
      ]);
    }
  });

  it('OpenRouter `reasoning` deltas are a thinking block; unknown fields never crash', async () => {
    const chunks = [
      {
        ...chunk({ role: 'assistant', reasoning: 'Think ', reasoning_details: [{ type: 'x' }] }),
        provider: 'Z',
      },
      chunk({ reasoning: 'twice.', annotations: [{ type: 'url_citation' }] }),
      chunk({ content: 'Done.', audio: null, something_new: { deep: [1] } }),
      { ...chunk({}, 'stop'), usage: { prompt_tokens: 9, completion_tokens: 4, cost: 0.1 } },
    ];
    for (const response of await bothPaths(chunks)) {
      expect(response.content).toEqual([
        { type: 'thinking', thinking: 'Think twice.', provider: 'openai-compatible' },
        { type: 'text', text: 'Done.' },
      ]);
      expect(response.usage).toEqual({
        inputTokens: 9,
        outputTokens: 4,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
    }
  });

  it('a refusal is a text block and stopReason refusal', async () => {
    const chunks = [
      chunk({ role: 'assistant', refusal: "I can't help" }),
      chunk({ refusal: ' with that.' }, 'stop'),
    ];
    for (const response of await bothPaths(chunks)) {
      expect(response.stopReason).toBe('refusal');
      expect(response.content).toEqual([{ type: 'text', text: "I can't help with that." }]);
    }
  });
});

// Error bodies as the providers document them (Groq's `tool_use_failed`, OpenRouter's mid-stream
// error chunk with a numeric code); no recording of either is in the fixtures.
const groqToolUseFailed = {
  error: {
    message:
      "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
    type: 'invalid_request_error',
    code: 'tool_use_failed',
    failed_generation: '<function=weather>{"city": Oslo}</function>',
  },
};
const openRouterMidStream = {
  ...chunk({ content: '' }, 'error'),
  error: { code: 502, message: 'Provider returned error: upstream disconnected' },
};

describe('in-stream errors are StreamErrors with the provider message and code', () => {
  it('Groq tool_use_failed keeps its message and code on both paths', async () => {
    for (const error of await bothErrors([chunk({ role: 'assistant' }), groqToolUseFailed])) {
      expect(error).toBeInstanceOf(StreamError);
      expect(error).toMatchObject({
        type: 'tool_use_failed',
        status: 400,
        message: expect.stringContaining('Failed to call a function'),
        body: { error: { failed_generation: expect.any(String) } },
      });
    }
  });

  it('an OpenRouter error after partial output is a retryable model error, not a truncated answer', async () => {
    const chunks = [chunk({ role: 'assistant', content: 'The answer is' }), openRouterMidStream];
    for (const error of await bothErrors(chunks)) {
      expect(error).toMatchObject({
        name: 'StreamError',
        status: 502,
        message: expect.stringContaining('upstream'),
      });
      expect(classifyError(error)).toMatchObject({ kind: 'transient', status: 502 });
    }
  });

  it('through the loop, the mid-stream error is retried and the run answers', async () => {
    server.replies.push(
      {
        kind: 'raw',
        body: sse([chunk({ role: 'assistant', content: 'The answer is' }), openRouterMidStream]),
      },
      { kind: 'raw', body: answer },
    );
    const model = retryingModel(openAIModel(client(), { model: 'gpt-test' }), {
      maxAttempts: 2,
      backoff: { next: () => ({ delayMs: 0, backoff: null as never }) },
    });
    const result = await runAgent({ model, input: 'hi' });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'ok' });
  });
});
