import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicModel } from '../src/anthropic/index.js';
import { ConfigurationError } from '../src/errors/index.js';
import { defineTool, runAgent } from '../src/index.js';
import type { Message } from '../src/model/content.js';
import type { ModelRequest, ModelSettings } from '../src/model/model.js';
import { memoryTraceSink } from '../src/trace/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';
import { anthropicStreams } from './support/recorded-streams.js';

/** Each provider feature through the real Anthropic SDK client, asserted on the wire body. */
const sse = (events: object[]) =>
  events
    .map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join('');
const answer = (text: string, usage: object = { input_tokens: 10, output_tokens: 1 }): Reply => ({
  kind: 'raw',
  body: sse([
    {
      type: 'message_start',
      message: {
        id: 'msg_a',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        usage,
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
    { type: 'message_stop' },
  ]),
});
const recorded = (name: string) => {
  const stream = anthropicStreams().find((candidate) => candidate.name === name);
  if (!stream) throw new Error(`no recording ${name}`);
  return stream;
};

let server: Awaited<ReturnType<typeof startProviderServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const tools = [
  {
    name: 'lookup',
    description: 'Look a thing up.',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  },
];
const hi: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];

/** The body the server received for one `generate` with these settings. */
async function wireBody(
  settings: ModelSettings | undefined,
  request: Partial<ModelRequest> = {},
  adapterSettings?: ModelSettings,
): Promise<Record<string, unknown>> {
  server = await startProviderServer([answer('ok')]);
  const model = anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
    model: 'claude-test',
    maxTokens: 8_000,
    ...(adapterSettings ? { settings: adapterSettings } : {}),
  });
  await model.generate({
    system: 'Be brief.',
    messages: hi,
    tools,
    toolChoice: 'auto',
    ...(settings ? { settings } : {}),
    ...request,
  });
  return server.requests[0]?.body as Record<string, unknown>;
}

describe('Anthropic request features, on the wire', () => {
  it('caches the stable prefix by default: system and the last tool carry cache_control; cache: false sends none', async () => {
    const body = await wireBody(undefined);
    expect(body['system']).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
    ]);
    expect((body['tools'] as object[]).at(-1)).toMatchObject({
      name: 'lookup',
      cache_control: { type: 'ephemeral' },
    });
    await server?.close();
    const off = await wireBody({ cache: false });
    expect(off['system']).toBe('Be brief.');
    expect(JSON.stringify(off)).not.toContain('cache_control');
  });

  it('a rolling breakpoint on the last message, with a 1h TTL; more than four breakpoints is a labeled error', async () => {
    const body = await wireBody({ cache: { messages: 'last', ttl: '1h' } });
    const messages = body['messages'] as { content: { cache_control?: unknown }[] }[];
    expect(messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    await server?.close();
    await expect(wireBody({ cache: { messages: [0, 0, 0] } })).rejects.toThrow(
      /settings\.cache\.messages: at most 4/,
    );
    await server?.close();
    await expect(wireBody({ cache: { key: 'k' } })).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('extended thinking: a budget, or adaptive with an effort; bad budgets are labeled errors before any request', async () => {
    expect((await wireBody({ thinking: { budgetTokens: 2_048 } }))['thinking']).toEqual({
      type: 'enabled',
      budget_tokens: 2_048,
    });
    await server?.close();
    const adaptive = await wireBody({ thinking: { effort: 'high' } });
    expect(adaptive).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    await server?.close();
    expect((await wireBody({ thinking: false }))['thinking']).toEqual({ type: 'disabled' });
    await server?.close();
    await expect(wireBody({ thinking: { budgetTokens: 500 } })).rejects.toThrow(
      /settings\.thinking\.budgetTokens: must be .* at least 1,024/,
    );
    expect(server?.requests).toHaveLength(0);
    await server?.close();
    await expect(wireBody({ thinking: { budgetTokens: 9_000 } })).rejects.toThrow(
      /less than maxOutputTokens/,
    );
    await server?.close();
    await expect(wireBody({ thinking: { effort: 'minimal' } })).rejects.toThrow(/settings\.thinking\.effort/);
  });

  it('tool choice required / named, the parallel switch, stop sequences, provider options last', async () => {
    expect((await wireBody({ parallelToolCalls: false }, { toolChoice: 'required' }))['tool_choice']).toEqual(
      { type: 'any', disable_parallel_tool_use: true },
    );
    await server?.close();
    expect((await wireBody(undefined, { toolChoice: { name: 'lookup' } }))['tool_choice']).toEqual({
      type: 'tool',
      name: 'lookup',
    });
    await server?.close();
    const body = await wireBody({
      stopSequences: ['###'],
      providerOptions: { anthropic: { metadata: { user_id: 'u1' } }, openai: { user: 'x' } },
    });
    expect(body).toMatchObject({ stop_sequences: ['###'], metadata: { user_id: 'u1' } });
    expect(body['user']).toBeUndefined();
  });

  it('adapter settings sit beneath the request’s, field by field', async () => {
    const body = await wireBody(
      { stopSequences: ['B'] },
      {},
      { stopSequences: ['A'], thinking: { budgetTokens: 1_024 } },
    );
    expect(body).toMatchObject({
      stop_sequences: ['B'],
      thinking: { type: 'enabled', budget_tokens: 1_024 },
    });
  });

  it('temperature and top_p do not exist in the Messages API (SDK 1.x): labeled errors, nothing sent', async () => {
    await expect(wireBody({ temperature: 0.2 })).rejects.toThrow(
      /settings\.temperature: the Anthropic Messages API takes no temperature/,
    );
    await server?.close();
    await expect(wireBody({ topP: 0.9 })).rejects.toThrow(/settings\.topP/);
    expect(server?.requests).toHaveLength(0);
  });

  it('images and PDFs in user content and in tool results', async () => {
    const messages: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
          {
            type: 'document',
            source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' },
            title: 'Q3',
          },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'screen' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            toolUseId: 'toolu_1',
            content: 'screenshot attached',
            isError: false,
            attachments: [
              { type: 'image', source: { type: 'base64', mediaType: 'image/jpeg', data: '/9j/' } },
            ],
          },
        ],
      },
    ];
    const body = await wireBody(undefined, { messages });
    const sent = body['messages'] as { content: object[] }[];
    expect(sent[0]?.content).toEqual([
      { type: 'text', text: 'What is in these?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
        title: 'Q3',
      },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    ]);
    expect(sent[2]?.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: [
        { type: 'text', text: 'screenshot attached' },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
      ],
    });
  });
});

describe('content the API requires back, through runAgent', () => {
  it('a thinking model’s tool turn goes back with its signed thinking block; the tool runs once', async () => {
    server = await startProviderServer([
      { kind: 'raw', body: recorded('vercel/anthropic/spliced-message-start.chunks.txt').sse },
      answer('Done.'),
    ]);
    const ran: unknown[] = [];
    const result = await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-3-haiku-20240307',
      }),
      input: 'Use the tool.',
      tools: [
        defineTool({
          name: 'test-tool',
          description: 'A tool.',
          effect: 'read',
          input: z.object({ value: z.string() }),
          execute: (input) => {
            ran.push(input);
            return 'ok';
          },
        }),
      ],
    });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Done.' });
    expect(ran).toEqual([{ value: 'Sparkle Day' }]);
    const second = server.requests[1]?.body as { messages: { role: string; content: object[] }[] };
    expect(second.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me call the tool.', signature: 'sig-second' },
        { type: 'tool_use', id: 'toolu_second', name: 'test-tool', input: { value: 'Sparkle Day' } },
      ],
    });
  });

  it('a pause_turn continuation sends server tool use, its results and the cited text back unchanged', async () => {
    const stream = recorded('vercel/anthropic/anthropic-web-search-tool.1.chunks.txt');
    // The recording ends end_turn; a long server-tool turn ends pause_turn instead, the case at issue.
    const paused = stream.sse.replace('"stop_reason":"end_turn"', '"stop_reason":"pause_turn"');
    server = await startProviderServer([{ kind: 'raw', body: paused }]);
    const sdk = await new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }).messages
      .stream({ model: 'm', max_tokens: 1, messages: [] })
      .finalMessage();
    server.replies.push({ kind: 'raw', body: paused }, answer('Summary.'));
    const sink = memoryTraceSink();
    const result = await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-sonnet-4-20250514',
      }),
      input: 'Search the news.',
      trace: sink,
    });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Summary.' });
    const continuation = server.requests[2]?.body as {
      messages: { role: string; content: Record<string, unknown>[] }[];
    };
    const sentBack = continuation.messages[1]?.content.map((block) => {
      const { cache_control: _cache, ...rest } = block;
      return rest;
    });
    const expected = sdk.content
      .filter((block) => !(block.type === 'text' && block.text === ''))
      .map((block) => JSON.parse(JSON.stringify(block)) as Record<string, unknown>)
      .map((block) =>
        block['type'] === 'text' && block['citations'] === null
          ? (({ citations: _c, ...rest }) => rest)(block)
          : block,
      );
    expect(sentBack).toEqual(expected);
    expect(sentBack?.map((block) => block['type'])).toEqual(
      expect.arrayContaining(['server_tool_use', 'web_search_tool_result']),
    );
  });

  it('the trace records the cache hit of each call', async () => {
    server = await startProviderServer([
      answer('Cached.', {
        input_tokens: 12,
        cache_read_input_tokens: 4_000,
        cache_creation_input_tokens: 0,
        output_tokens: 1,
      }),
    ]);
    const sink = memoryTraceSink();
    await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-test',
      }),
      input: 'hi',
      trace: sink,
    });
    const response = sink.events.find((event) => event.type === 'model-response');
    expect(response).toMatchObject({
      response: { usage: { cacheReadTokens: 4_000, inputTokens: 12 } },
      prefillTokens: 4_012,
    });
  });

  it('run settings and a step’s changes reach the wire; a named tool the step does not offer stops the run labeled', async () => {
    server = await startProviderServer([answer('ok')]);
    const lookup = defineTool({
      name: 'lookup',
      description: 'Look up.',
      effect: 'read',
      input: z.object({ q: z.string() }),
      execute: () => 'x',
    });
    await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-test',
        maxTokens: 4_000,
      }),
      input: 'hi',
      tools: [lookup],
      modelSettings: { stopSequences: ['END'], thinking: { budgetTokens: 1_024 } },
      prepareStep: () => ({ toolChoice: { name: 'lookup' }, settings: { stopSequences: ['STOP'] } }),
    });
    expect(server.requests[0]?.body).toMatchObject({
      stop_sequences: ['STOP'],
      thinking: { type: 'enabled', budget_tokens: 1_024 },
      tool_choice: { type: 'tool', name: 'lookup' },
    });
    const bad = await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-test',
      }),
      input: 'hi',
      tools: [lookup],
      prepareStep: () => ({ toolChoice: { name: 'delete_everything' } }),
    });
    expect(bad.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'prepare_step',
      error: { message: expect.stringContaining('does not offer') },
    });
    // Option errors throw at the call, before anything runs (the run options' contract).
    const misspelt = () =>
      runAgent({
        model: anthropicModel(new Anthropic({ apiKey: 't' }), { model: 'x' }),
        input: 'hi',
        modelSettings: { temprature: 1 } as never,
      });
    expect(misspelt).toThrow(/modelSettings\.temprature: is not a model setting/);
    expect(() =>
      runAgent({
        model: anthropicModel(new Anthropic({ apiKey: 't' }), { model: 'x' }),
        input: 'hi',
        modelSettings: { topP: 3 },
      }),
    ).toThrow(/modelSettings\.topP: must be a number from 0 to 1/);
  });
});

describe('programmatic tool calling', () => {
  it('a tool call made from code runs; the next request names the container and sends the call back with its caller', async () => {
    const stream = recorded('vercel/anthropic/anthropic-programmatic-tool-calling.1.chunks.txt#2');
    server = await startProviderServer([{ kind: 'raw', body: stream.sse }, answer('Rolled.')]);
    const rolls: unknown[] = [];
    const result = await runAgent({
      model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
        model: 'claude-sonnet-4-5-20250929',
      }),
      input: 'Play dice.',
      tools: [
        defineTool({
          name: 'rollDie',
          description: 'Roll a die.',
          effect: 'read',
          input: z.object({ player: z.string() }),
          execute: (input) => {
            rolls.push(input);
            return 4;
          },
        }),
      ],
    });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Rolled.' });
    expect(rolls).toEqual([{ player: 'player2' }]);
    const second = server.requests[1]?.body as {
      container?: string;
      messages: { content: Record<string, unknown>[] }[];
    };
    expect(second.container).toBe('container_011CWHPPTDTn1XufeRB9uHeH');
    expect(second.messages[1]?.content).toEqual([
      {
        type: 'tool_use',
        id: 'toolu_015dGLMbwBKv1ZRQr6KdJzeH',
        name: 'rollDie',
        input: { player: 'player2' },
        caller: { type: 'code_execution_20250825', tool_id: 'srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK' },
      },
    ]);
    expect(second.messages[2]?.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_015dGLMbwBKv1ZRQr6KdJzeH',
    });
  });
});
