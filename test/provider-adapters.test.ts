import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicModel } from '../src/anthropic/index.js';
import { defineTool, runAgent } from '../src/index.js';
import { openAIModel } from '../src/openai/index.js';
import { classifyError, retryingModel } from '../src/resilience/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';

const toolJson = JSON.stringify({
  to: 'ana@example.com',
  subject: 'Q3 "numbers"',
  body: 'Revenue grew 12% — café 😀',
});
const cuts = [3, 27, 40, toolJson.length - 4];
const pieces = (text: string, at: number[]) =>
  [0, ...at].map((start, i) => text.slice(start, [...at, text.length][i]));

const anthropicToolTurn = (disconnectAfter?: number): Reply => ({
  kind: 'sse',
  format: 'anthropic',
  ...(disconnectAfter !== undefined ? { disconnectAfter } : {}),
  events: [
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 90, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Emailing Ana.' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'send_email', input: {} },
    },
    ...pieces(toolJson, cuts).map((partial_json) => ({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json },
    })),
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 60 } },
    { type: 'message_stop' },
  ],
});
const anthropicText: Reply = {
  kind: 'sse',
  format: 'anthropic',
  events: [
    {
      type: 'message_start',
      message: {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 200, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Sent.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
    { type: 'message_stop' },
  ],
};
const openaiToolTurn = (disconnectAfter?: number): Reply => ({
  kind: 'sse',
  format: 'openai',
  ...(disconnectAfter !== undefined ? { disconnectAfter } : {}),
  events: [
    {
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Emailing Ana.' } }],
    },
    ...pieces(toolJson, cuts).map((fragment, i) => ({
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                ...(i === 0 ? { id: 'call_1', type: 'function' } : {}),
                function: { ...(i === 0 ? { name: 'send_email' } : {}), arguments: fragment },
              },
            ],
          },
        },
      ],
    })),
    {
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
    },
    {
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [],
      usage: { prompt_tokens: 90, completion_tokens: 60, prompt_tokens_details: { cached_tokens: 0 } },
    },
  ],
});
const openaiText: Reply = {
  kind: 'sse',
  format: 'openai',
  events: [
    {
      id: 'c2',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Sent.' } }],
    },
    {
      id: 'c2',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    },
    {
      id: 'c2',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: [],
      usage: { prompt_tokens: 200, completion_tokens: 3 },
    },
  ],
};

const providers = [
  {
    name: 'anthropic',
    tool: anthropicToolTurn,
    text: anthropicText,
    // Index of the first input_json_delta event: cut the stream two fragments into the arguments.
    cutAt: 7,
    make: (url: string) =>
      anthropicModel(new Anthropic({ apiKey: 'test', baseURL: url, maxRetries: 0 }), {
        model: 'claude-test',
      }),
    error: (_status: number, type: string) => ({
      type: 'error',
      error: { type, message: `${type} happened` },
    }),
  },
  {
    name: 'openai',
    tool: openaiToolTurn,
    text: openaiText,
    cutAt: 3,
    make: (url: string) =>
      openAIModel(new OpenAI({ apiKey: 'test', baseURL: `${url}/v1`, maxRetries: 0 }), { model: 'gpt-test' }),
    error: (_status: number, type: string) => ({
      error: { type, message: `${type} happened`, code: null, param: null },
    }),
  },
];

function sendEmailTool(sent: unknown[]) {
  return defineTool({
    name: 'send_email',
    description: 'Send an email.',
    effect: 'read',
    input: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
    execute: (input) => {
      sent.push(input);
      return { sent: true };
    },
  });
}

describe.each(providers)(
  'the $name adapter, through the official SDK against a loopback server',
  (provider) => {
    it('runs the whole loop: streamed arguments split at awkward points, then the answer', async () => {
      const server = await startProviderServer([provider.tool(), provider.text]);
      const sent: unknown[] = [];
      try {
        const result = await runAgent({
          model: provider.make(server.url),
          input: 'Email Ana the Q3 numbers.',
          system: 'Be brief.',
          tools: [sendEmailTool(sent)],
        });
        expect(result.outcome).toEqual({ kind: 'answered', text: 'Sent.' });
        expect(sent).toEqual([JSON.parse(toolJson)]);
        expect(result.usage.inputTokens).toBe(90 + 200);
        const second = JSON.stringify(server.requests[1]?.body);
        expect(second).toContain(
          provider.name === 'anthropic' ? '"tool_use_id":"toolu_1"' : '"tool_call_id":"call_1"',
        );
        expect(JSON.stringify(server.requests[0]?.body)).toContain('"send_email"');
      } finally {
        await server.close();
      }
    });

    it('a stream cut off mid-arguments ends the run truncated; the tool never runs', async () => {
      const server = await startProviderServer([provider.tool(provider.cutAt)]);
      const sent: unknown[] = [];
      try {
        const result = await runAgent({
          model: provider.make(server.url),
          input: 'Email Ana.',
          tools: [sendEmailTool(sent)],
        });
        expect(result.outcome).toMatchObject({ kind: 'truncated', block: 'tool_use' });
        expect(sent).toEqual([]);
      } finally {
        await server.close();
      }
    });

    it('429 with retry-after and 529 overloaded are throttled and retried; a 400 is terminal after one attempt', async () => {
      const server = await startProviderServer([
        {
          kind: 'error',
          status: 429,
          headers: { 'retry-after': '0' },
          body: provider.error(429, 'rate_limit_error'),
        },
        { kind: 'error', status: 529, body: provider.error(529, 'overloaded_error') },
        provider.text,
        { kind: 'error', status: 400, body: provider.error(400, 'invalid_request_error') },
      ]);
      try {
        const seen: string[] = [];
        const model = retryingModel(provider.make(server.url), {
          maxAttempts: 3,
          backoff: {
            next: () => ({ delayMs: 1, backoff: { next: () => ({ delayMs: 1, backoff: null as never }) } }),
          },
          onRetry: ({ classification }) => seen.push(`${classification.kind}:${classification.status}`),
        });
        const ok = await runAgent({ model, input: 'hi' });
        expect(ok.outcome).toEqual({ kind: 'answered', text: 'Sent.' });
        expect(seen).toEqual(['throttled:429', 'throttled:529']);
        const bad = await runAgent({ model, input: 'hi' });
        expect(bad.outcome).toMatchObject({
          kind: 'hard_error',
          source: 'model',
          error: { name: 'RetryError', message: expect.stringContaining('terminal after 1 attempt') },
        });
        expect(server.requests).toHaveLength(4);
      } finally {
        await server.close();
      }
    });

    it('SDK errors are classified from their status', async () => {
      const server = await startProviderServer([
        { kind: 'error', status: 503, body: provider.error(503, 'api_error') },
      ]);
      try {
        const error = await provider
          .make(server.url)
          .generate({
            system: '',
            messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
            tools: [],
            toolChoice: 'auto',
          })
          .catch((thrown: unknown) => thrown);
        expect(classifyError(error)).toMatchObject({ kind: 'transient', status: 503 });
      } finally {
        await server.close();
      }
    });
  },
);
