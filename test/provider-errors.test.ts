import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel } from '../src/anthropic/index.js';
import { runAgent } from '../src/index.js';
import type { ModelRequest } from '../src/model/model.js';
import { openAIModel, openAIResponsesModel } from '../src/openai/index.js';
import { classifyError, retryingModel } from '../src/resilience/index.js';
import { assembleOpenAIChatStream, assembleOpenAIResponsesStream, StreamError } from '../src/stream/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';
import { openAIResponsesStreams } from './support/recorded-streams.js';

/**
 * Errors the way the SDKs see them: each error body below is the documented wire shape (Anthropic's
 * `{ type: 'error', error: { type, message } }` as an SSE `error` event or an HTTP body; OpenAI's
 * `{ error: { type, code, message } }`), sent through the real SDK client from a loopback server,
 * and classified from what the SDK throws.
 */
const request: ModelRequest = {
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  toolChoice: 'auto',
};

const messageStart = {
  type: 'message_start',
  message: {
    id: 'msg_e',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [],
    stop_reason: null,
    usage: { input_tokens: 12, output_tokens: 1 },
  },
};
const sse = (events: object[]) =>
  events
    .map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join('');
/** Half a sentence, then the provider's error event: what an overload mid-answer looks like. */
const anthropicMidStreamError = (type: string, message: string): Reply => ({
  kind: 'raw',
  body: sse([
    messageStart,
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'The capital of' } },
    { type: 'error', error: { type, message } },
  ]),
});
const anthropicAnswer: Reply = {
  kind: 'raw',
  body: sse([
    messageStart,
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paris.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
    { type: 'message_stop' },
  ]),
};
const anthropicError = (status: number, type: string, headers: Record<string, string> = {}): Reply => ({
  kind: 'error',
  status,
  headers,
  body: { type: 'error', error: { type, message: `${type}: from the provider` } },
});
const openAIError = (
  status: number,
  type: string,
  code: string | null,
  headers: Record<string, string> = {},
): Reply => ({
  kind: 'error',
  status,
  headers,
  body: { error: { message: `${code ?? type}: from the provider`, type, param: null, code } },
});
/** An OpenAI-compatible server (Groq, OpenRouter) reports errors as a chunk inside a 200 stream. */
const openAIMidStreamError = (error: object): Reply => ({
  kind: 'raw',
  body: `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Partial' }, finish_reason: null }] })}\n\ndata: ${JSON.stringify({ error })}\n\n`,
});

let server: Awaited<ReturnType<typeof startProviderServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
async function anthropicThrown(...replies: Reply[]) {
  server = await startProviderServer(replies);
  const model = anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
    model: 'claude-test',
  });
  return model.generate(request).catch((error: unknown) => error);
}
async function openAIThrown(...replies: Reply[]) {
  server = await startProviderServer(replies);
  const model = openAIModel(new OpenAI({ apiKey: 't', baseURL: `${server.url}/v1`, maxRetries: 0 }), {
    model: 'gpt-test',
  });
  return model.generate(request).catch((error: unknown) => error);
}

describe('in-stream errors through the real SDK clients', () => {
  it.each([
    ['overloaded_error', 'throttled', 529],
    ['rate_limit_error', 'throttled', 429],
    ['api_error', 'transient', 500],
    ['invalid_request_error', 'terminal', 400],
  ] as const)(
    'Anthropic %s after partial output is %s (as status %i), with the provider message',
    async (type, kind, status) => {
      const thrown = await anthropicThrown(anthropicMidStreamError(type, `${type} mid-stream`));
      expect(thrown).toBeInstanceOf(Error);
      expect(classifyError(thrown)).toMatchObject({
        kind,
        status,
        reason: type,
        providerMessage: `${type} mid-stream`,
      });
    },
  );

  it('an overload after half a sentence is retried, and the run answers from the retry', async () => {
    server = await startProviderServer([
      anthropicMidStreamError('overloaded_error', 'Overloaded'),
      anthropicAnswer,
    ]);
    const seen: string[] = [];
    const model = retryingModel(
      anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-test',
      }),
      {
        maxAttempts: 2,
        backoff: { next: () => ({ delayMs: 1, backoff: null as never }) },
        onRetry: ({ classification }) => seen.push(`${classification.kind}:${classification.reason}`),
      },
    );
    const result = await runAgent({ model, input: 'Capital of France?' });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Paris.' });
    expect(seen).toEqual(['throttled:overloaded_error']);
    expect(server.requests).toHaveLength(2);
  });

  it('OpenAI-compatible error chunks keep their message: Groq tool_use_failed is resampled, a 502 code is transient', async () => {
    const groq = await openAIThrown(
      openAIMidStreamError({
        message:
          "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
        type: 'invalid_request_error',
        code: 'tool_use_failed',
        failed_generation: '<function=search>{"q": "x"</function>',
      }),
    );
    expect(classifyError(groq)).toMatchObject({
      kind: 'transient',
      reason: 'tool_use_failed',
      providerMessage: expect.stringContaining('Failed to call a function'),
    });
    await server?.close();
    const openRouter = await openAIThrown(
      openAIMidStreamError({ code: 502, message: 'Provider returned error' }),
    );
    expect(classifyError(openRouter)).toMatchObject({
      kind: 'transient',
      status: 502,
      providerMessage: 'Provider returned error',
    });
  });
});

describe('HTTP errors the way the SDKs retry them', () => {
  it('x-should-retry: false makes a 500 terminal; true makes a 400 retryable', async () => {
    expect(
      classifyError(await anthropicThrown(anthropicError(500, 'api_error', { 'x-should-retry': 'false' }))),
    ).toMatchObject({ kind: 'terminal', status: 500 });
    await server?.close();
    expect(
      classifyError(
        await anthropicThrown(anthropicError(400, 'invalid_request_error', { 'x-should-retry': 'true' })),
      ),
    ).toMatchObject({ kind: 'transient', status: 400 });
  });

  it('409 is retried like the SDKs do', async () => {
    expect(classifyError(await openAIThrown(openAIError(409, 'conflict', null)))).toMatchObject({
      kind: 'transient',
      status: 409,
    });
  });

  it('429 insufficient_quota is billing, not load: terminal, with the message', async () => {
    const thrown = await openAIThrown(openAIError(429, 'insufficient_quota', 'insufficient_quota'));
    expect(classifyError(thrown)).toMatchObject({
      kind: 'terminal',
      status: 429,
      reason: 'insufficient_quota',
      providerMessage: 'insufficient_quota: from the provider',
    });
    await server?.close();
    const plain = await openAIThrown(
      openAIError(429, 'requests', 'rate_limit_exceeded', { 'retry-after': '2' }),
    );
    expect(classifyError(plain)).toMatchObject({ kind: 'throttled', status: 429, retryAfterMs: 2_000 });
  });

  it('Anthropic 529 overloaded over HTTP is throttled', async () => {
    expect(classifyError(await anthropicThrown(anthropicError(529, 'overloaded_error')))).toMatchObject({
      kind: 'throttled',
      status: 529,
      reason: 'overloaded_error',
    });
  });
});

describe('recorded error bodies, and the SDK stream fed straight to an assembler', () => {
  const recordedBody = (path: string) =>
    JSON.parse(readFileSync(new URL(`./fixtures/provider-streams/${path}`, import.meta.url), 'utf8'));

  it('the recorded 400s (a legacy parameter on Chat, temperature on a reasoning model) are terminal, message kept', async () => {
    const chat = await openAIThrown({
      kind: 'error',
      status: 400,
      body: recordedBody('vercel/openai-chat/reasoning-model-legacy-parameter-error.json'),
    });
    expect(classifyError(chat)).toMatchObject({
      kind: 'terminal',
      status: 400,
      providerMessage: expect.stringContaining("'max_tokens' is not supported"),
    });
    await server?.close();
    server = await startProviderServer([
      {
        kind: 'error',
        status: 400,
        body: recordedBody('vercel/openai-responses/reasoning-model-temperature-error.json'),
      },
    ]);
    const client = new OpenAI({ apiKey: 't', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const responses = await openAIResponsesModel(client, { model: 'gpt-5' })
      .generate(request)
      .catch((error: unknown) => error);
    expect(classifyError(responses)).toMatchObject({
      kind: 'terminal',
      status: 400,
      providerMessage: expect.stringContaining("'temperature' is not supported"),
    });
  });

  it('assembleOpenAIResponsesStream on the raw SDK stream keeps the recorded in-stream error (insufficient_quota: terminal)', async () => {
    const recorded = openAIResponsesStreams().find((stream) =>
      stream.name.endsWith('openai-error.1.chunks.txt'),
    );
    server = await startProviderServer([{ kind: 'raw', body: recorded?.sse ?? '' }]);
    const client = new OpenAI({ apiKey: 't', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-5-nano', input: 'hi', stream: true });
    const thrown = await assembleOpenAIResponsesStream(stream).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(StreamError);
    expect(classifyError(thrown)).toMatchObject({ kind: 'terminal', reason: 'insufficient_quota' });
  });

  it('assembleOpenAIChatStream on the raw SDK stream keeps an error chunk after partial output', async () => {
    server = await startProviderServer([
      openAIMidStreamError({ code: 502, message: 'Provider returned error' }),
    ]);
    const client = new OpenAI({ apiKey: 't', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const thrown = await assembleOpenAIChatStream(stream as never).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(StreamError);
    expect(classifyError(thrown)).toMatchObject({
      kind: 'transient',
      status: 502,
      providerMessage: 'Provider returned error',
    });
  });
});
