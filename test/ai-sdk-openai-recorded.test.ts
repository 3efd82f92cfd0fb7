import { createOpenAI } from '@ai-sdk/openai';
import { APICallError } from '@ai-sdk/provider';
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiSdkModel } from '../src/ai-sdk/index.js';
import { defineTool, type ModelRequest, type ModelResponse, runAgent } from '../src/index.js';
import { classifyError } from '../src/resilience/index.js';
import { StreamError } from '../src/stream/index.js';
import { type Reply, startProviderServer } from './support/provider-server.js';
import {
  openAIChatStreams,
  openAIResponsesStreams,
  type RecordedStream,
} from './support/recorded-streams.js';

// A real provider package, @ai-sdk/openai, reading every recorded OpenAI stream from a loopback
// server: reins (`aiSdkModel`) and the AI SDK itself (`streamText`) get the same bytes through the
// same provider model, and must report the same turn.

type Api = 'responses' | 'chat';

const openaiAt = (url: string) => createOpenAI({ baseURL: `${url}/v1`, apiKey: 't' });
const modelAt = (api: Api, url: string) =>
  api === 'responses' ? openaiAt(url).responses('gpt-5') : openaiAt(url).chat('gpt-5');

const recordings: { api: Api; stream: RecordedStream }[] = [
  ...openAIResponsesStreams().map((stream) => ({ api: 'responses' as const, stream })),
  ...openAIChatStreams().map((stream) => ({ api: 'chat' as const, stream })),
];
const recording = (suffix: string) => {
  const found = recordings.find(({ stream }) => stream.name.endsWith(suffix));
  if (!found) throw new Error(`no recorded stream ${suffix}`);
  return found;
};

/**
 * The client tools a recording calls, by the names @ai-sdk/openai gives them when the request
 * declares no provider tool (a `shell_call` is `shell`, a custom tool keeps its name). Both sides
 * declare them as plain function tools, so the AI SDK finds every call it reports.
 */
function clientToolNames(stream: RecordedStream): string[] {
  const named: Record<string, string> = {
    apply_patch_call: 'apply_patch',
    local_shell_call: 'local_shell',
    shell_call: 'shell',
  };
  const names = new Set<string>();
  for (const event of stream.events as {
    type?: string;
    item?: { type?: string; name?: string; execution?: string };
    choices?: { delta?: { tool_calls?: { function?: { name?: string } }[] } }[];
  }[]) {
    const item = event.type === 'response.output_item.added' ? event.item : undefined;
    if (item?.type === 'function_call' || item?.type === 'custom_tool_call') names.add(item.name as string);
    else if (item?.type === 'tool_search_call' && item.execution === 'client') names.add('tool_search');
    else if (item?.type !== undefined && named[item.type]) names.add(named[item.type] as string);
    for (const choice of event.choices ?? [])
      for (const call of choice.delta?.tool_calls ?? [])
        if (call.function?.name) names.add(call.function.name);
  }
  return [...names];
}

const ask = (toolNames: string[]): ModelRequest => ({
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: toolNames.map((name) => ({ name, description: `${name}.`, inputSchema: { type: 'object' } })),
  toolChoice: 'auto',
});

/** What `streamText` reports for one step over the same provider model. */
async function sdkReading(api: Api, url: string, toolNames: string[]) {
  const errors: unknown[] = [];
  const result = streamText({
    model: modelAt(api, url),
    prompt: 'hi',
    maxRetries: 0,
    onError: ({ error }) => {
      errors.push(error);
    },
    tools: Object.fromEntries(
      toolNames.map((name) => [name, tool({ inputSchema: jsonSchema({ type: 'object' }) })]),
    ),
  });
  const [text, toolCalls, finishReason, rawFinishReason, usage, totalUsage, response, reasoning] =
    await Promise.all([
      result.text,
      result.toolCalls,
      result.finishReason,
      result.rawFinishReason,
      result.usage,
      result.totalUsage,
      result.response,
      result.reasoning,
    ]);
  return {
    text,
    toolCalls,
    finishReason,
    rawFinishReason,
    usage,
    totalUsage,
    response,
    reasoning,
    errors,
  };
}
type SdkReading = Awaited<ReturnType<typeof sdkReading>>;

/** Both readings of one recording, each from its own replay of the same bytes. */
async function bothReadings(api: Api, stream: RecordedStream) {
  const toolNames = clientToolNames(stream);
  const server = await startProviderServer([
    { kind: 'raw', body: stream.sse },
    { kind: 'raw', body: stream.sse },
  ]);
  try {
    const ours = await aiSdkModel(modelAt(api, server.url)).generate(ask(toolNames));
    const theirs = await sdkReading(api, server.url, toolNames);
    return { ours, theirs };
  } finally {
    await server.close();
  }
}

/** The AI SDK's unified finish reasons in reins's words (its raw reasons never override here). */
const stopReasons: Record<string, string> = {
  stop: 'end_turn',
  'tool-calls': 'tool_use',
  length: 'max_tokens',
  'content-filter': 'refusal',
  interrupted: 'interrupted',
  other: 'other',
  error: 'other',
};

/**
 * Where reins's usage rule and the AI SDK's figures part on purpose, and why:
 * - xAI counts reasoning beside `completion_tokens` (`total_tokens` = prompt + completion +
 *   reasoning); @ai-sdk/openai passes `completion_tokens` through as the output total and so reports
 *   less output than was billed. reins adds the reasoning back (as its native Chat adapter does), so
 *   `reasoningTokens` stays a part of `outputTokens` and the budget sees every billed token.
 * - A stream with no usage at all: the AI SDK reports every count undefined; reins reports no usage,
 *   so the loop estimates the turn rather than bill it as zero.
 */
const usageDifferences: Record<string, 'reasoning beside output' | 'no usage'> = {
  'vercel/openai-compatible-chat/xai-text.chunks.txt': 'reasoning beside output',
  'vercel/openai-compatible-chat/xai-tool-call.chunks.txt': 'reasoning beside output',
  'vercel/openai-compatible-chat/anthropic-fallback-tool-call.sse': 'no usage',
};

/** Recordings the provider cannot read to the end: each gives a labeled reins outcome (below). */
const unreadable = new Set([
  'vercel/openai-responses/openai-error.1.chunks.txt',
  'vercel/openai-responses/parallel-tool-call-wrapper.1.chunks.txt',
]);

function expectAgrees(stream: RecordedStream, ours: ModelResponse, theirs: SdkReading) {
  // A tool call id the provider made up (an MCP approval's dummy id; a Chat call without an id) is
  // new on every read: checked to be there on both sides, not to be equal.
  const idOf = (id: string) => (stream.sse.includes(id) ? id : 'generated');

  expect(
    ours.content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join(''),
  ).toBe(theirs.text);

  // Calls the loop runs: tool_use blocks, input parsed. The AI SDK found every declared tool.
  const clientCalls = theirs.toolCalls.filter((call) => !call.providerExecuted);
  expect(clientCalls.filter((call) => call.invalid)).toEqual([]);
  expect(
    ours.content
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({ id: idOf(block.id), name: block.name, input: block.input })),
  ).toEqual(
    clientCalls.map((call) => ({ id: idOf(call.toolCallId), name: call.toolName, input: call.input })),
  );
  // Calls the provider ran (web search, code interpreter, MCP, hosted tool search, programs): provider
  // blocks the loop never runs. (The AI SDK marks those the request did not declare `invalid`.)
  expect(
    ours.content
      .flatMap((block) => (block.type === 'provider' && block.kind === 'tool-call' ? [block.raw] : []))
      .map((raw) => ({ id: idOf(String(raw['toolCallId'])), name: raw['toolName'], input: raw['input'] })),
  ).toEqual(
    theirs.toolCalls
      .filter((call) => call.providerExecuted)
      .map((call) => ({ id: idOf(call.toolCallId), name: call.toolName, input: call.input })),
  );

  expect(ours.content.filter((block) => block.type === 'thinking').map((block) => block.thinking)).toEqual(
    theirs.reasoning.map((part) => (part.type === 'reasoning' ? part.text : undefined)),
  );

  expect(ours.stopReason).toBe(stopReasons[theirs.finishReason]);

  // One step: the step's usage is the run's.
  expect(theirs.totalUsage).toMatchObject({
    inputTokens: theirs.usage.inputTokens,
    outputTokens: theirs.usage.outputTokens,
    inputTokenDetails: theirs.usage.inputTokenDetails,
    outputTokenDetails: theirs.usage.outputTokenDetails,
  });
  const sdk = theirs.usage;
  const difference = usageDifferences[stream.name];
  if (difference === 'no usage') {
    expect([sdk.inputTokens, sdk.outputTokens]).toEqual([undefined, undefined]);
    expect(ours.usage).toBeUndefined();
  } else {
    const reasoning = sdk.outputTokenDetails.reasoningTokens;
    expect(ours.usage).toEqual({
      // reins's inputTokens is the uncached part; the AI SDK's is the whole prompt.
      inputTokens: sdk.inputTokenDetails.noCacheTokens,
      cacheReadTokens: sdk.inputTokenDetails.cacheReadTokens ?? 0,
      cacheWriteTokens: sdk.inputTokenDetails.cacheWriteTokens ?? 0,
      outputTokens:
        (sdk.outputTokens ?? 0) + (difference === 'reasoning beside output' ? (reasoning ?? 0) : 0),
      ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
    });
    if (difference === 'reasoning beside output') {
      const raw = sdk.raw as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
      expect(raw.total_tokens).toBe(raw.prompt_tokens + raw.completion_tokens + (reasoning ?? 0));
    }
  }

  expect([ours.id, ours.model]).toEqual([theirs.response.id, theirs.response.modelId]);
}

describe('aiSdkModel over @ai-sdk/openai, on every recorded OpenAI stream, agrees with streamText', () => {
  it('covers every recording: all but the unreadable ones are compared field by field', () => {
    expect(recordings.filter(({ api }) => api === 'responses')).toHaveLength(33);
    expect(recordings.filter(({ api }) => api === 'chat')).toHaveLength(9);
    expect(recordings.filter(({ stream }) => unreadable.has(stream.name))).toHaveLength(unreadable.size);
  });

  it.each(
    recordings
      .filter(({ stream }) => !unreadable.has(stream.name))
      .map((entry) => [entry.stream.name, entry]),
  )('%s', async (_name, { api, stream }) => {
    const { ours, theirs } = await bothReadings(api, stream);
    expect(theirs.errors).toEqual([]);
    expectAgrees(stream, ours, theirs);
  });

  it('the recordings exercise what is compared: calls of both kinds, reasoning, cache reads, a refusal', async () => {
    const encrypted = await bothReadings(
      'responses',
      recording('openai-reasoning-encrypted-content.1.chunks.txt').stream,
    );
    expect(encrypted.ours.content.filter((block) => block.type === 'tool_use')).toHaveLength(3);
    expect(encrypted.ours.content[0]).toMatchObject({ type: 'thinking', provider: 'ai-sdk:openai' });
    const search = await bothReadings('responses', recording('openai-web-search-tool.1.chunks.txt').stream);
    expect(search.ours.usage).toMatchObject({ cacheReadTokens: 3_712, reasoningTokens: 3_712 });
    expect(search.theirs.toolCalls.filter((call) => call.providerExecuted)).toHaveLength(6);
    const refusal = await bothReadings('chat', recording('.stream() emits refusal logprobs events 1').stream);
    expect([refusal.ours.stopReason, refusal.theirs.finishReason]).toEqual(['refusal', 'content-filter']);
  });
});

describe('streams @ai-sdk/openai cannot read give a labeled reins outcome', () => {
  const replay = async (api: Api, replies: Reply[], toolNames: string[] = []) => {
    const server = await startProviderServer(replies);
    try {
      return await aiSdkModel(modelAt(api, server.url))
        .generate(ask(toolNames))
        .catch((caught: unknown) => caught);
    } finally {
      await server.close();
    }
  };

  it('insufficient_quota before any output: the APICallError the provider threw, terminal (billing, not load)', async () => {
    const { stream } = recording('openai-error.1.chunks.txt');
    const error = await replay('responses', [{ kind: 'raw', body: stream.sse }]);
    // The provider turns the in-stream error into a 429 it marks not retryable.
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429, isRetryable: false });
    // classifyError reads the quota code from the error's `data`, as it does from the native SDK's body.
    expect(classifyError(error)).toMatchObject({
      kind: 'terminal',
      status: 429,
      reason: 'insufficient_quota',
    });

    const server = await startProviderServer([{ kind: 'raw', body: stream.sse }]);
    try {
      // streamText has no step to report: it rejects, and its onError saw the same error.
      await expect(sdkReading('responses', server.url, [])).rejects.toThrow(/No output generated/);
    } finally {
      await server.close();
    }
  });

  it('insufficient_quota after output: a StreamError with the provider type and message, terminal', async () => {
    const text = recording('openai-shell-local-multiturn.1.chunks.txt').stream.sse;
    const failure = recording('openai-error.1.chunks.txt').stream.sse;
    const cut = text.indexOf('event: response.output_text.done');
    const at = failure.indexOf('event: error');
    expect([cut, at].every((index) => index > 0)).toBe(true);
    const body = `${text.slice(0, cut)}${failure.slice(at)}`;
    const error = await replay('responses', [{ kind: 'raw', body }]);
    expect(error).toBeInstanceOf(StreamError);
    expect(error).toMatchObject({ type: 'insufficient_quota', status: 429 });
    expect((error as StreamError).message).toMatch(/exceeded your current quota/);
    expect(classifyError(error)).toMatchObject({ kind: 'terminal', reason: 'insufficient_quota' });
  });

  it('a frame that is not JSON: malformed_event (502), retried, as the native adapter says; the AI SDK reads past it', async () => {
    const { stream } = recording('parallel-tool-call-wrapper.1.chunks.txt');
    expect(stream.malformed).toHaveLength(2);
    const error = await replay('responses', [{ kind: 'raw', body: stream.sse }], clientToolNames(stream));
    expect(error).toBeInstanceOf(StreamError);
    expect(error).toMatchObject({ type: 'malformed_event', status: 502 });
    expect(classifyError(error)).toMatchObject({ kind: 'transient', status: 502 });

    // streamText reports the parse error and goes on with what it could read; reins never hands the
    // loop a call from a garbled stream: the turn is retried whole.
    const server = await startProviderServer([{ kind: 'raw', body: stream.sse }]);
    try {
      const theirs = await sdkReading('responses', server.url, clientToolNames(stream));
      expect(theirs.errors.map((caught) => (caught as Error).name)).toContain('AI_JSONParseError');
    } finally {
      await server.close();
    }
  });

  it('a stream that ends without its terminal event: interrupted on both sides', async () => {
    const { stream } = recording('openai-client-tool-search.2.chunks.txt');
    const body = stream.sse.slice(0, stream.sse.indexOf('event: response.function_call_arguments.done'));
    const server = await startProviderServer([
      { kind: 'raw', body },
      { kind: 'raw', body },
    ]);
    try {
      const ours = await aiSdkModel(modelAt('responses', server.url)).generate(ask(['get_weather']));
      const theirs = await sdkReading('responses', server.url, ['get_weather']);
      expect([ours.stopReason, theirs.finishReason]).toEqual(['interrupted', 'interrupted']);
      // The arguments arrived whole but the call never closed: the AI SDK drops it; reins keeps its
      // text and never runs it (a `tool-call` part, not the deltas, makes a call executable).
      expect(theirs.toolCalls).toEqual([]);
      expect(ours.content).toEqual([
        {
          type: 'tool_use',
          id: 'call_Q7pq6EfVGRnauPLWSSYBGJ1l',
          name: 'get_weather',
          input: undefined,
          inputText: '{"location":"San Francisco, CA","unit":"fahrenheit"}',
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('a connection dropped after output: reins keeps the text, interrupted; streamText throws', async () => {
    const { stream } = recording('vercel/openai-chat/openai-text.chunks.txt');
    const cutAt = stream.sse.indexOf('\n\n', stream.sse.length / 2) + 2;
    const server = await startProviderServer([
      { kind: 'raw', body: stream.sse, cutAt },
      { kind: 'raw', body: stream.sse, cutAt },
    ]);
    try {
      const ours = await aiSdkModel(modelAt('chat', server.url)).generate(ask([]));
      // reins's rule: a turn cut short is `interrupted` with what arrived, so the loop labels it
      // rather than losing it; the AI SDK has no step to report and surfaces the transport error.
      expect(ours.stopReason).toBe('interrupted');
      const full = await bothReadings('chat', stream);
      const partial = ours.content[0] as { type: 'text'; text: string };
      expect(partial.type).toBe('text');
      expect(partial.text.length).toBeGreaterThan(0);
      expect(full.theirs.text.startsWith(partial.text)).toBe(true);
      expect(full.theirs.text.length).toBeGreaterThan(partial.text.length);
      await expect(sdkReading('chat', server.url, [])).rejects.toThrow();
    } finally {
      await server.close();
    }
  });
});

describe('runAgent over aiSdkModel(createOpenAI(...).responses("gpt-5")), on a recorded run', () => {
  // One recording of a whole run: reasoning and a calculator call, two more calls, then the answer.
  const { stream } = recording('openai-reasoning-encrypted-content.1.chunks.txt');
  const turns = stream.sse.split(/(?<=event: response\.completed\ndata: [^\n]*\n\n)/);
  const replies = (): Reply[] => turns.map((body) => ({ kind: 'raw', body }));
  const calculate = ({ a, b, op }: { a: number; b: number; op: string }) => (op === 'add' ? a + b : a * b);
  const calculatorInput = z.object({ a: z.number(), b: z.number(), op: z.string() });
  const question = 'What is (12 + 7) * 3 * 10?';

  const notStored = { openai: { store: false, include: ['reasoning.encrypted_content'] } };
  it.each<[string, { openai?: typeof notStored.openai }]>([
    ['stored responses: the reasoning goes back as an item_reference', {}],
    ['store: false: the reasoning goes back whole, with its encrypted content', notStored],
  ])('%s; every later request holds what the AI SDK sends', async (_name, providerOptions) => {
    expect(turns).toHaveLength(4);
    const sdkServer = await startProviderServer(replies());
    const reinsServer = await startProviderServer(replies());
    try {
      const theirs = streamText({
        model: openaiAt(sdkServer.url).responses('gpt-5'),
        prompt: question,
        stopWhen: stepCountIs(5),
        maxRetries: 0,
        providerOptions,
        tools: {
          calculator: tool({ inputSchema: calculatorInput, execute: async (input) => calculate(input) }),
        },
      });
      expect(await theirs.text).toBe('The final result is **570**.');

      const asked: unknown[] = [];
      const result = await runAgent({
        model: aiSdkModel(openaiAt(reinsServer.url).responses('gpt-5'), { settings: { providerOptions } }),
        input: question,
        tools: [
          defineTool({
            name: 'calculator',
            description: 'Arithmetic.',
            effect: 'read',
            input: calculatorInput,
            execute: (input) => {
              asked.push(input);
              return calculate(input);
            },
          }),
        ],
      });
      expect(result.outcome).toEqual({ kind: 'answered', text: 'The final result is **570**.' });
      expect(asked).toEqual([
        { a: 12, b: 7, op: 'add' },
        { a: 19, b: 3, op: 'multiply' },
        { a: 57, b: 10, op: 'multiply' },
      ]);

      const inputsOf = (requests: { body: unknown }[]) =>
        requests.map((request) => (request.body as { input: { type?: string; output?: string }[] }).input);
      const sdkInputs = inputsOf(sdkServer.requests);
      const reinsInputs = inputsOf(reinsServer.requests);
      expect(reinsInputs).toHaveLength(4);
      // The second request: the reasoning item, the call, and its function_call_output.
      const second = reinsInputs[1] ?? [];
      expect(second.map((item) => item.type)).toEqual([
        undefined,
        'openai' in providerOptions ? 'reasoning' : 'item_reference',
        'function_call',
        'function_call_output',
      ]);
      expect(second[3]).toMatchObject({ call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn' });
      if ('openai' in providerOptions)
        expect(second[1]).toMatchObject({
          id: 'rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9',
          encrypted_content: expect.stringMatching(/^gAAAAAB/),
          summary: [{ type: 'summary_text', text: expect.stringMatching(/^\*\*Calculating/) }],
        });
      // Item for item what the AI SDK sends, but for the tool output: reins wraps it in its
      // untrusted-content envelope (prompt-injection defence) where the AI SDK sends the bare value.
      const unwrapped = reinsInputs.map((input) =>
        input.map((item) =>
          item.type === 'function_call_output'
            ? {
                ...item,
                output:
                  /^<tool-output tool="calculator" trust="untrusted">\n([\s\S]*)\n<\/tool-output>$/.exec(
                    item.output ?? '',
                  )?.[1],
              }
            : item,
        ),
      );
      expect(unwrapped).toEqual(sdkInputs);
    } finally {
      await sdkServer.close();
      await reinsServer.close();
    }
  });
});
