import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError } from '../src/errors/reins-error.js';
import { defineTool, runAgent } from '../src/index.js';
import type { Message } from '../src/model/content.js';
import type { ModelRequest, ModelSettings } from '../src/model/model.js';
import { type OpenAIResponsesModelOptions, openAIResponsesModel } from '../src/openai/index.js';
import { classifyError, retryingModel } from '../src/resilience/index.js';
import { StreamError } from '../src/stream/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';
import { openAIResponsesStreams, parseSse } from './support/recorded-streams.js';

type Event = { type: string; [field: string]: unknown };
const usage = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 100 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 12 },
  total_tokens: 150,
};
const response = (status: string, output: unknown[], extra: object = {}) => ({
  id: 'resp_1',
  object: 'response',
  model: 'gpt-test',
  status,
  output,
  usage,
  ...extra,
});
const message = (text: string) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const functionCall = (args: string) => ({
  id: 'fc_1',
  type: 'function_call',
  call_id: 'call_1',
  name: 'lookup',
  arguments: args,
  status: 'completed',
});

/** A Responses stream: the item added, its deltas, the item done, then the final event. */
function streamOf(items: unknown[], deltas: Event[] = [], final: Event | null = null): Reply {
  const events: Event[] = [
    { type: 'response.created', response: response('in_progress', []) },
    ...items.map((item, output_index) => ({ type: 'response.output_item.added', output_index, item })),
    ...deltas,
    ...items.map((item, output_index) => ({ type: 'response.output_item.done', output_index, item })),
  ];
  if (final !== null) events.push(final);
  return { kind: 'sse', format: 'openai', events };
}
const completed = (items: unknown[]) =>
  streamOf(items, [], { type: 'response.completed', response: response('completed', items) });
const textReply = completed([message('Done.')]);

const baseRequest: ModelRequest = {
  system: 'Be brief.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  toolChoice: 'auto',
};
const lookupTool = {
  name: 'lookup',
  description: 'Look a thing up.',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
};

/** One call through the real SDK client against the loopback server; the wire body and the result. */
async function call(
  request: Partial<ModelRequest>,
  options: Partial<OpenAIResponsesModelOptions> = {},
  replies: Reply[] = [textReply],
) {
  const server = await startProviderServer(replies);
  try {
    const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0, logLevel: 'off' });
    const model = openAIResponsesModel(client, { model: 'gpt-test', ...options });
    const result = await model.generate({ ...baseRequest, ...request }).catch((error: unknown) => error);
    return {
      body: server.requests[0]?.body as Record<string, unknown> | undefined,
      result,
      requests: server.requests,
    };
  } finally {
    await server.close();
  }
}

describe('openAIResponsesModel request, on the wire through the SDK', () => {
  it('sends instructions, input, store false with encrypted reasoning, tools and max_output_tokens', async () => {
    const { body, requests } = await call({ tools: [lookupTool], maxOutputTokens: 500 });
    expect(requests[0]?.path).toBe('/responses');
    expect(body).toEqual({
      model: 'gpt-test',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      store: false,
      stream: true,
      instructions: 'Be brief.',
      include: ['reasoning.encrypted_content'],
      tools: [{ type: 'function', ...pick(lookupTool), strict: false }],
      tool_choice: 'auto',
      max_output_tokens: 500,
    });
  });

  it('store: true sends no include; encryptedReasoning: false turns it off with store false', async () => {
    expect((await call({}, { store: true })).body).toMatchObject({ store: true });
    expect((await call({}, { store: true })).body).not.toHaveProperty('include');
    expect((await call({}, { encryptedReasoning: false })).body).not.toHaveProperty('include');
    expect((await call({ system: '' })).body).not.toHaveProperty('instructions');
  });

  it.each([
    ['auto', 'auto'],
    ['none', 'none'],
    ['required', 'required'],
    [{ name: 'lookup' }, { type: 'function', name: 'lookup' }],
  ] as const)('toolChoice %j is tool_choice %j', async (toolChoice, wire) => {
    const { body } = await call({ tools: [lookupTool], toolChoice });
    expect(body?.['tool_choice']).toEqual(wire);
  });

  it('user images and documents become input_image and input_file parts', async () => {
    const messages: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0K' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
          {
            type: 'document',
            source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' },
            title: 'q3.pdf',
          },
          { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBERi0y' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/b.pdf' } },
        ],
      },
    ];
    const { body } = await call({ messages });
    expect(body?.['input']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Compare these.' },
          { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0K' },
          { type: 'input_image', detail: 'auto', image_url: 'https://example.com/a.jpg' },
          { type: 'input_file', filename: 'q3.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' },
          { type: 'input_file', filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0y' },
          { type: 'input_file', file_url: 'https://example.com/b.pdf' },
        ],
      },
    ]);
  });

  it('history: text, calls, OpenAI reasoning and provider items go back; other providers’ blocks do not', async () => {
    const reasoning = {
      id: 'rs_1',
      type: 'reasoning',
      encrypted_content: 'gAAA',
      summary: [{ type: 'summary_text', text: 'Plan.' }],
    };
    const webSearch = {
      id: 'ws_1',
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'q' },
    };
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Look it up.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Plan.', provider: 'openai', providerData: reasoning },
          { type: 'thinking', thinking: 'Claude thought.', signature: 'sig', provider: 'anthropic' },
          { type: 'redacted_thinking', data: 'opaque', provider: 'anthropic' },
          { type: 'provider', provider: 'openai', kind: 'web_search_call', raw: webSearch },
          { type: 'provider', provider: 'anthropic', kind: 'server_tool_use', raw: { id: 'srvtoolu_1' } },
          { type: 'text', text: 'Searching, ' },
          { type: 'text', text: 'then looking up.' },
          { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' } },
          { type: 'tool_use', id: 'call_2', name: 'lookup', input: undefined, inputText: '{"q": ' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolUseId: 'call_1', content: '{"found":true}', isError: false },
          { type: 'tool_result', toolUseId: 'call_2', content: 'invalid arguments', isError: true },
          { type: 'text', text: 'Go on.' },
        ],
      },
    ];
    const { body } = await call({ messages });
    expect(body?.['input']).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Look it up.' }] },
      reasoning,
      webSearch,
      { role: 'assistant', content: 'Searching, then looking up.' },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
      { type: 'function_call', call_id: 'call_2', name: 'lookup', arguments: '{"q": ' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"found":true}' },
      { type: 'function_call_output', call_id: 'call_2', output: 'invalid arguments' },
      { role: 'user', content: [{ type: 'input_text', text: 'Go on.' }] },
    ]);
  });

  it('tool-result attachments go in the function_call_output list beside the text', async () => {
    const messages: Message[] = [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            toolUseId: 'call_1',
            content: 'Here is the page.',
            isError: false,
            attachments: [
              { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBO' } },
              {
                type: 'document',
                source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBE' },
                title: 'p.pdf',
              },
            ],
          },
        ],
      },
    ];
    const { body } = await call({ messages });
    expect((body?.['input'] as unknown[] | undefined)?.[1]).toEqual({
      type: 'function_call_output',
      call_id: 'call_1',
      output: [
        { type: 'input_text', text: 'Here is the page.' },
        { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBO' },
        { type: 'input_file', filename: 'p.pdf', file_data: 'data:application/pdf;base64,JVBE' },
      ],
    });
  });

  it('settings: effort, parallel tool calls, sampling, cache key; request settings over adapter settings', async () => {
    const { body } = await call(
      { settings: { temperature: 0.2, cache: { key: 'tenant-7' } } },
      { settings: { thinking: { effort: 'high' }, parallelToolCalls: false, temperature: 1, topP: 0.9 } },
    );
    expect(body).toMatchObject({
      reasoning: { effort: 'high', summary: 'auto' },
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.9,
      prompt_cache_key: 'tenant-7',
    });
  });

  it('providerOptions.openai is merged into the body last; other providers’ options are ignored', async () => {
    const settings: ModelSettings = {
      temperature: 0.5,
      providerOptions: {
        openai: { temperature: 0.7, text: { verbosity: 'low' }, service_tier: 'flex' },
        anthropic: { top_k: 5 },
      },
    };
    const { body } = await call({ settings });
    expect(body).toMatchObject({ temperature: 0.7, text: { verbosity: 'low' }, service_tier: 'flex' });
    expect(body).not.toHaveProperty('top_k');
  });

  it.each([
    [
      'settings.thinking.budgetTokens',
      { thinking: { budgetTokens: 2048 } },
      /use|set settings.thinking.effort/,
    ],
    ['settings.stopSequences', { stopSequences: ['END'] }, /no stop parameter/],
    ['settings.cache.ttl', { cache: { ttl: '1h' } }, /prompt_cache_retention/],
  ] as const)('%s is a labeled ConfigurationError and nothing is sent', async (option, settings, message) => {
    const { result, requests } = await call({ settings: settings as ModelSettings });
    expect(isConfigurationError(result)).toBe(true);
    expect(result).toMatchObject({ option, message: expect.stringMatching(message) });
    expect(requests).toHaveLength(0);
  });
});

function pick(tool: typeof lookupTool) {
  return { name: tool.name, description: tool.description, parameters: tool.inputSchema };
}

describe('openAIResponsesModel responses, through the SDK', () => {
  it('streams text and tool input live; usage, reasoning tokens, id and model from the final response', async () => {
    const args = '{"q":"café 😀"}';
    const deltas: Event[] = [
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Look' },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'ing.' },
      ...['{"q":', '"caf', 'é 😀"}'].map((delta) => ({
        type: 'response.function_call_arguments.delta',
        output_index: 1,
        delta,
      })),
      { type: 'response.web_search_call.searching', output_index: 1 },
      { type: 'response.some_future_event', output_index: 7, anything: true },
    ];
    const items = [message('Looking.'), functionCall(args)];
    const reply = streamOf(items, deltas, {
      type: 'response.completed',
      response: response('completed', items),
    });
    const seen: string[] = [];
    const { result } = await call(
      { tools: [lookupTool] },
      {
        onText: (delta) => seen.push(`text:${delta}`),
        onToolInput: ({ callId, display }) => seen.push(`${callId}:${JSON.stringify(display)}`),
      },
      [reply],
    );
    expect(seen).toEqual([
      'text:Look',
      'text:ing.',
      'call_1:{}',
      'call_1:{"q":"caf"}',
      'call_1:{"q":"café 😀"}',
    ]);
    expect(result).toEqual({
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'café 😀' } },
      ],
      stopReason: 'tool_use',
      usage: {
        inputTokens: 20,
        outputTokens: 30,
        cacheReadTokens: 100,
        cacheWriteTokens: 0,
        reasoningTokens: 12,
      },
      id: 'resp_1',
      model: 'gpt-test',
    });
  });

  it('arguments that are not JSON keep their text and no input; a zero-argument call is {}', async () => {
    const items = [functionCall('{"q": nope}'), { ...functionCall(''), call_id: 'call_2' }];
    const { result } = await call({}, {}, [completed(items)]);
    expect(result).toMatchObject({
      stopReason: 'tool_use',
      content: [
        { type: 'tool_use', id: 'call_1', input: undefined, inputText: '{"q": nope}' },
        { type: 'tool_use', id: 'call_2', input: {} },
      ],
    });
  });

  it('annotations become citations; a refusal part is text with stop reason refusal', async () => {
    const citation = {
      type: 'url_citation',
      url: 'https://example.com',
      title: 'Ex',
      start_index: 0,
      end_index: 4,
    };
    const cited = {
      ...message('Cited.'),
      content: [{ type: 'output_text', text: 'Cited.', annotations: [citation] }],
    };
    expect((await call({}, {}, [completed([cited])])).result).toMatchObject({
      content: [{ type: 'text', text: 'Cited.', citations: [citation] }],
      stopReason: 'end_turn',
    });
    const refused = { ...message(''), content: [{ type: 'refusal', refusal: 'I can’t help with that.' }] };
    expect((await call({}, {}, [completed([refused])])).result).toMatchObject({
      content: [{ type: 'text', text: 'I can’t help with that.' }],
      stopReason: 'refusal',
    });
  });

  it.each([
    ['max_output_tokens', 'max_tokens'],
    ['content_filter', 'refusal'],
  ])('response.incomplete (%s) is %s; a cut-off call keeps only its text', async (reason, stopReason) => {
    const items = [{ ...functionCall('{"q":"ha'), status: 'incomplete' }];
    const final = {
      type: 'response.incomplete',
      response: response('incomplete', items, { incomplete_details: { reason } }),
    };
    const { result } = await call({}, {}, [streamOf(items, [], final)]);
    expect(result).toMatchObject({
      stopReason,
      content: [{ type: 'tool_use', input: undefined, inputText: '{"q":"ha' }],
    });
  });

  it('a stream that ends before response.completed is interrupted, with what arrived', async () => {
    const items = [message('Half an ans')];
    const { result } = await call({}, {}, [
      { ...(streamOf(items) as Extract<Reply, { kind: 'sse' }>), disconnectAfter: 3 },
    ]);
    expect(result).toMatchObject({
      stopReason: 'interrupted',
      content: [{ type: 'text', text: 'Half an ans' }],
      id: 'resp_1',
    });
  });

  it('response.failed after partial text is a StreamError classifyError calls transient', async () => {
    const failed = {
      type: 'response.failed',
      response: response('failed', [], {
        error: { code: 'server_error', message: 'The model had an error.' },
      }),
    };
    const deltas = [{ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Half' }];
    const { result } = await call({}, {}, [streamOf([], deltas, failed)]);
    expect(result).toBeInstanceOf(StreamError);
    expect(result).toMatchObject({ type: 'server_error', status: 500, message: 'The model had an error.' });
    expect(classifyError(result).kind).toBe('transient');
  });

  it('a flat error event (the API’s own shape) keeps its code: rate_limit_exceeded is throttled', async () => {
    const error = {
      type: 'error',
      code: 'rate_limit_exceeded',
      message: 'Slow down.',
      param: null,
      sequence_number: 2,
    };
    const { result } = await call({}, {}, [streamOf([], [error])]);
    expect(result).toMatchObject({
      name: 'StreamError',
      type: 'rate_limit_exceeded',
      status: 429,
      message: 'Slow down.',
    });
    expect(classifyError(result).kind).toBe('throttled');
  });

  it('a failed stream is retried by retryingModel and the run answers', async () => {
    const failed = {
      type: 'response.failed',
      response: response('failed', [], { error: { code: 'server_error', message: 'x' } }),
    };
    const server = await startProviderServer([streamOf([], [], failed), textReply]);
    try {
      const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
      const model = retryingModel(openAIResponsesModel(client, { model: 'gpt-test' }), {
        maxAttempts: 2,
        backoff: { next: () => ({ delayMs: 0, backoff: null as never }) },
      });
      const result = await runAgent({ model, input: 'hi' });
      expect(result.outcome).toEqual({ kind: 'answered', text: 'Done.' });
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});

describe('freeform custom tools', () => {
  it('are declared as custom tools; their calls run with { input: text } and go back as custom items', async () => {
    const sqlTool = { name: 'write_sql', description: 'Write SQL.', inputSchema: { type: 'object' } };
    const call1 = {
      type: 'custom_tool_call',
      id: 'ct_1',
      call_id: 'call_sql',
      name: 'write_sql',
      input: 'SELECT 1',
    };
    const first = await call(
      { tools: [sqlTool], toolChoice: { name: 'write_sql' } },
      { customTools: ['write_sql'] },
      [completed([call1])],
    );
    expect(first.body).toMatchObject({
      tools: [{ type: 'custom', name: 'write_sql', description: 'Write SQL.' }],
      tool_choice: { type: 'custom', name: 'write_sql' },
    });
    expect(first.result).toMatchObject({
      stopReason: 'tool_use',
      content: [{ type: 'tool_use', id: 'call_sql', name: 'write_sql', input: { input: 'SELECT 1' } }],
    });
    const messages: Message[] = [
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_sql', name: 'write_sql', input: { input: 'SELECT 1' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', toolUseId: 'call_sql', content: '1', isError: false }],
      },
    ];
    const second = await call({ messages, tools: [sqlTool] }, { customTools: ['write_sql'] });
    expect(second.body?.['input']).toEqual([
      { type: 'custom_tool_call', call_id: 'call_sql', name: 'write_sql', input: 'SELECT 1' },
      { type: 'custom_tool_call_output', call_id: 'call_sql', output: '1' },
    ]);
  });
});

describe('runAgent over openAIResponsesModel, replaying a recorded reasoning tool turn', () => {
  it('runs the tool, then sends the reasoning item and the function_call back unchanged', async () => {
    const recording = openAIResponsesStreams().find((s) =>
      s.name.endsWith('openai-reasoning-encrypted-content.1.chunks.txt'),
    );
    const frames = parseSse(recording?.sse ?? '');
    // The file holds four responses; the first is reasoning + a calculator call, the last the answer.
    const bounds = frames.flatMap((frame, at) =>
      frame.data.includes('"type":"response.completed"') ? [at] : [],
    );
    const sse = (from: number, to: number) =>
      frames
        .slice(from, to + 1)
        .map((frame) => `event: ${frame.event}\ndata: ${frame.data}\n\n`)
        .join('');
    const toolTurn = sse(0, bounds[0] as number);
    const answer = sse((bounds[2] as number) + 1, bounds[3] as number);
    const finalOutput = (
      JSON.parse(frames[bounds[0] as number]?.data ?? '{}') as { response: { output: Event[] } }
    ).response.output;
    const [reasoning, call1] = finalOutput as [Event, Event];

    const server = await startProviderServer([
      { kind: 'raw', body: toolTurn },
      { kind: 'raw', body: answer },
    ]);
    try {
      const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
      const computed: unknown[] = [];
      const calculator = defineTool({
        name: 'calculator',
        description: 'A minimal calculator.',
        effect: 'read',
        input: z.object({
          a: z.number(),
          b: z.number(),
          op: z.enum(['add', 'subtract', 'multiply', 'divide']),
        }),
        execute: (input) => {
          computed.push(input);
          return { result: 570 };
        },
      });
      const result = await runAgent({
        model: openAIResponsesModel(client, {
          model: 'gpt-5-nano',
          settings: { thinking: { effort: 'low' } },
        }),
        input: 'Compute it.',
        tools: [calculator],
      });
      expect(result.outcome).toEqual({ kind: 'answered', text: 'The final result is **570**.' });
      expect(computed).toEqual([JSON.parse(String(call1['arguments']))]);
      const input = (server.requests[1]?.body as { input: Event[] } | undefined)?.input ?? [];
      expect(input[1]).toEqual(reasoning);
      expect(input[2]).toEqual({
        type: 'function_call',
        call_id: call1['call_id'],
        name: call1['name'],
        arguments: call1['arguments'],
      });
      expect(input[3]).toMatchObject({ type: 'function_call_output', call_id: call1['call_id'] });
      expect(server.requests[1]?.body).toMatchObject({
        include: ['reasoning.encrypted_content'],
        store: false,
      });
    } finally {
      await server.close();
    }
  });
});
