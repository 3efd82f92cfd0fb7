import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicModel } from '../src/anthropic/index.js';
import { defineTool, memoryTraceSink, replayTrace, runAgent, withAttachments } from '../src/index.js';
import type { MediaBlock } from '../src/model/content.js';
import { openAIResponsesModel } from '../src/openai/index.js';
import { scriptedModel } from '../src/testing/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';

/** A tool returns images and documents with `withAttachments`; they reach the provider as parts of the tool result. */
const png: MediaBlock = {
  type: 'image',
  source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
};
const screenshot = (returned: () => unknown) =>
  defineTool({
    name: 'screenshot',
    description: 'Screenshot a page.',
    effect: 'read',
    trustedOutput: true,
    input: z.object({ url: z.string() }),
    output: z.object({ title: z.string() }),
    execute: async () => returned() as never,
  });
const sse = (events: object[]): Reply => ({
  kind: 'raw',
  body: events
    .map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join(''),
});
const start = {
  type: 'message_start',
  message: {
    id: 'm',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [],
    stop_reason: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  },
};
const toolTurn = sse([
  start,
  {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} },
  },
  {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'input_json_delta', partial_json: '{"url":"https://example.com"}' },
  },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
  { type: 'message_stop' },
]);
const answer = sse([
  start,
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'A blue page.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
  { type: 'message_stop' },
]);

let server: Awaited<ReturnType<typeof startProviderServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('attachments a tool returns', () => {
  it('reach Anthropic as image parts of the tool result; the text is the checked value; replay matches', async () => {
    server = await startProviderServer([toolTurn, answer]);
    const sink = memoryTraceSink();
    const result = await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-test',
      }),
      input: 'What does example.com look like?',
      tools: [screenshot(() => withAttachments({ title: 'Example' }, [png]))],
      trace: sink,
    });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'A blue page.' });
    const sent = server.requests[1]?.body as { messages: { content: Record<string, unknown>[] }[] };
    expect(sent.messages[2]?.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      is_error: false,
      content: [
        { type: 'text', text: '{"title":"Example"}' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
    expect(result.messages[2]).toMatchObject({ content: [{ type: 'tool_result', attachments: [png] }] });
    const replay = await replayTrace(sink.events);
    expect(replay.matches).toBe(true);
  });

  it('reach the Responses API as input_image parts of the function_call_output', async () => {
    const chunk = (event: object) =>
      `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`;
    const response = (output: object[], status = 'completed') => ({
      id: 'resp_1',
      object: 'response',
      model: 'gpt-test',
      status,
      output,
      usage: {
        input_tokens: 5,
        output_tokens: 2,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    });
    const call = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_1',
      name: 'screenshot',
      arguments: '{"url":"https://example.com"}',
      status: 'completed',
    };
    const text = {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Blue.', annotations: [] }],
    };
    server = await startProviderServer([
      {
        kind: 'raw',
        body:
          chunk({ type: 'response.created', response: response([], 'in_progress') }) +
          chunk({ type: 'response.completed', response: response([call]) }),
      },
      {
        kind: 'raw',
        body:
          chunk({ type: 'response.created', response: response([], 'in_progress') }) +
          chunk({ type: 'response.completed', response: response([text]) }),
      },
    ]);
    const result = await runAgent({
      model: openAIResponsesModel(new OpenAI({ apiKey: 't', baseURL: `${server.url}/v1`, maxRetries: 0 }), {
        model: 'gpt-test',
      }),
      input: 'Look at example.com.',
      tools: [screenshot(() => withAttachments({ title: 'Example' }, [png]))],
    });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Blue.' });
    const input = (server.requests[1]?.body as { input: Record<string, unknown>[] } | undefined)?.input ?? [];
    const output = input.find((item) => item['type'] === 'function_call_output');
    expect(JSON.stringify(output)).toContain('input_image');
    expect(JSON.stringify(output)).toContain('data:image/png;base64,iVBORw0KGgo=');
  });

  it('an attachment that is not a well-formed image or document keeps the result from the model, labeled', async () => {
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'screenshot', input: { url: 'x' } }] }, { text: 'done' }]),
      input: 'Look.',
      tools: [
        screenshot(() =>
          withAttachments({ title: 'Example' }, [{ type: 'image', source: { type: 'base64' } } as never]),
        ),
      ],
    });
    const results = result.messages[2]?.content[0];
    expect(results).toMatchObject({ type: 'tool_result', isError: true });
    expect(JSON.stringify(results)).toContain('attachment that could not be read');
    expect(JSON.stringify(result.messages)).not.toContain('attachments');
  });

  it('the value is checked against the output schema, not the wrapper', async () => {
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'screenshot', input: { url: 'x' } }] }, { text: 'done' }]),
      input: 'Look.',
      tools: [screenshot(() => withAttachments({ wrong: 1 }, [png]))],
    });
    expect(result.messages[2]?.content[0]).toMatchObject({ type: 'tool_result', isError: true });
    expect(JSON.stringify(result.messages[2])).not.toContain('iVBORw0KGgo=');
  });
});
