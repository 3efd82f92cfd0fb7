import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { AssistantBlock, JsonValue } from '../src/model/content.js';
import type { ModelRequest, ModelResponse, StopReason } from '../src/model/model.js';
import { openAIResponsesModel } from '../src/openai/index.js';
import { assembleOpenAIResponsesStream, StreamError } from '../src/stream/index.js';
import { startProviderServer } from './support/provider-server.js';
import {
  eventsOf,
  openAIResponsesStreams,
  parseSse,
  type RecordedStream,
} from './support/recorded-streams.js';

type Item = { type: string; [field: string]: unknown };
type SdkResponse = {
  id: string;
  model: string;
  status?: string | null;
  output: Item[];
  output_text: string;
  incomplete_details?: { reason?: string } | null;
  usage?: {
    input_tokens: number;
    output_tokens: number;
    input_tokens_details?: { cached_tokens?: number };
    output_tokens_details?: { reasoning_tokens?: number };
  } | null;
};

const typeOf = (data: string): string | undefined => {
  try {
    return (JSON.parse(data) as { type?: string }).type;
  } catch {
    return /"type":"([^"]+)"/.exec(data)?.[1];
  }
};
const terminalTypes = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * A recording may hold several responses back to back (vercel records each step of a multi-step
 * call into one file); each is one HTTP stream, so each is replayed and compared on its own.
 */
function perResponse(stream: RecordedStream): RecordedStream[] {
  const groups: { event?: string; data: string }[][] = [[]];
  for (const frame of parseSse(stream.sse)) {
    groups[groups.length - 1]?.push(frame);
    if (terminalTypes.has(typeOf(frame.data) ?? '')) groups.push([]);
  }
  const nonEmpty = groups.filter((group) => group.length > 0);
  if (nonEmpty.length === 1) return [stream];
  return nonEmpty.map((frames, at) => ({
    name: `${stream.name}#${at + 1}`,
    events: frames.map((frame) => JSON.parse(frame.data)),
    sse: frames
      .map((frame) => `${frame.event ? `event: ${frame.event}\n` : ''}data: ${frame.data}\n\n`)
      .join(''),
  }));
}

const files = openAIResponsesStreams();
const streams = files.flatMap(perResponse);

/**
 * Where the SDK's accumulator throws on a stream that did finish, and the rule that wins. The SDK
 * (6.x) rejects event types it does not know (`assertNever`) and an `output_index` with a gap
 * (the phase recording skips index 1); reins ignores unknown events and keys items by index. The
 * truth is then the final `response.completed` payload, which is exactly what the SDK's
 * accumulator adopts as its snapshot at that event.
 */
const sdkThrowsOnFinishedStream: Record<string, RegExp> = {
  'vercel/openai-responses/openai-apply-patch-tool.1.chunks.txt': /Unhandled response stream event/,
  'vercel/openai-responses/openai-shell-container.1.chunks.txt': /Unhandled response stream event/,
  'vercel/openai-responses/openai-shell-skills.1.chunks.txt': /Unhandled response stream event/,
  'vercel/openai-responses/openai-shell-tool.1.chunks.txt#1': /Unhandled response stream event/,
  'vercel/openai-responses/openai-phase.1.chunks.txt': /missing output at index 2/,
};
/** Streams whose outcome is an error, not a response; each has its own test below. */
const errorStreams = new Set([
  'vercel/openai-responses/openai-error.1.chunks.txt',
  'vercel/openai-responses/parallel-tool-call-wrapper.1.chunks.txt',
]);

/** Each call replays `sse` once, through a fresh loopback server. */
async function withReplay<T>(sse: string, run: (client: OpenAI) => Promise<T>): Promise<T> {
  const replay = await startProviderServer([{ kind: 'raw', body: sse }]);
  try {
    return await run(new OpenAI({ apiKey: 'test', baseURL: replay.url, maxRetries: 0, logLevel: 'off' }));
  } finally {
    await replay.close();
  }
}

const request: ModelRequest = {
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  toolChoice: 'auto',
};

const sdkFinal = (sse: string) =>
  withReplay(sse, async (client) => {
    const response: unknown = await client.responses.stream({ model: 'm', input: 'hi' }).finalResponse();
    return response as SdkResponse;
  });
const throughSdk = (sse: string) =>
  withReplay(sse, (client) => openAIResponsesModel(client, { model: 'm' }).generate(request));
const direct = (stream: RecordedStream) => assembleOpenAIResponsesStream(eventsOf(stream.events));

/** The SDK's answer, or (where it is known to throw) the final payload it would have adopted. */
async function truthOf(stream: RecordedStream): Promise<SdkResponse> {
  const known = sdkThrowsOnFinishedStream[stream.name];
  if (!known) return sdkFinal(stream.sse);
  await expect(sdkFinal(stream.sse)).rejects.toThrow(known);
  const final = stream.events.findLast((event) => terminalTypes.has(event.type ?? ''));
  return final?.['response'] as SdkResponse;
}

/** What each output item must become, per the mapping in assemble-responses.ts. */
function expectedBlocks(item: Item): AssistantBlock[] {
  const texts = (list: unknown) => (Array.isArray(list) ? list.map((part) => String(part.text)) : []);
  switch (item.type) {
    case 'message':
      return (item['content'] as Item[]).map((part) => {
        if (part.type === 'refusal') return { type: 'text', text: String(part['refusal']) };
        const annotations = part['annotations'] as JsonValue[] | undefined;
        return annotations && annotations.length > 0
          ? { type: 'text', text: String(part['text']), citations: annotations }
          : { type: 'text', text: String(part['text']) };
      });
    case 'function_call':
      return [
        {
          type: 'tool_use',
          id: String(item['call_id']),
          name: String(item['name']),
          input: JSON.parse(String(item['arguments']) || '{}'),
        },
      ];
    case 'custom_tool_call':
      return [
        {
          type: 'tool_use',
          id: String(item['call_id']),
          name: String(item['name']),
          input: { input: item['input'] },
        },
      ];
    case 'reasoning': {
      const summary = texts(item['summary']);
      const thinking = (summary.length > 0 ? summary : texts(item['content'])).join('\n\n');
      return [{ type: 'thinking', thinking, provider: 'openai', providerData: item as JsonValue }];
    }
    default:
      return [
        { type: 'provider', provider: 'openai', kind: item.type, raw: item as { [key: string]: JsonValue } },
      ];
  }
}

/** The SDK's parser adds `parsed_arguments` and `parsed: null`; they are not on the wire. */
function wireItem(item: Item): Item {
  const { parsed_arguments: _parsed, ...rest } = item;
  if (rest.type !== 'message') return rest as Item;
  const content = (rest['content'] as Item[]).map(({ parsed: _, ...part }) => part);
  return { ...rest, content } as Item;
}

function stopReasonOf(truth: SdkResponse): StopReason {
  if (truth.status === 'incomplete')
    return truth.incomplete_details?.reason === 'max_output_tokens' ? 'max_tokens' : 'refusal';
  return truth.output.some((item) => item.type === 'function_call' || item.type === 'custom_tool_call')
    ? 'tool_use'
    : 'end_turn';
}

function expectAgrees(reins: ModelResponse, truth: SdkResponse): void {
  const output = truth.output.map(wireItem);
  expect(reins.content).toEqual(output.flatMap(expectedBlocks));
  const text = output
    .filter((item) => item.type === 'message')
    .flatMap((item) => (item['content'] as Item[]).filter((part) => part.type === 'output_text'))
    .map((part) => part['text'])
    .join('');
  expect(text).toBe(truth.output_text ?? text);
  expect(reins.stopReason).toBe(stopReasonOf(truth));
  const usage = truth.usage;
  const cached = usage?.input_tokens_details?.cached_tokens ?? 0;
  expect(reins.usage).toEqual({
    inputTokens: (usage?.input_tokens ?? 0) - cached,
    outputTokens: usage?.output_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    ...(usage?.output_tokens_details?.reasoning_tokens !== undefined
      ? { reasoningTokens: usage.output_tokens_details.reasoning_tokens }
      : {}),
  });
  expect(reins.id).toBe(truth.id);
  expect(reins.model).toBe(truth.model);
}

describe('recorded OpenAI Responses streams agree with ResponseStream.finalResponse()', () => {
  it('reads every recording: 33 files holding 37 responses', () => {
    expect(files).toHaveLength(33);
    expect(streams).toHaveLength(37);
    expect(Object.keys(sdkThrowsOnFinishedStream).every((name) => streams.some((s) => s.name === name))).toBe(
      true,
    );
  });

  const finished = streams.filter((stream) => !errorStreams.has(stream.name));
  it.each(finished.map((stream) => [stream.name, stream] as const))('%s', async (_name, stream) => {
    const truth = await truthOf(stream);
    expectAgrees(await direct(stream), truth);
    expectAgrees(await throughSdk(stream.sse), truth);
  });

  // A proxy may send `response.completed` with `output: []`: the streamed items then stand in.
  const allDone = finished.filter((stream) => {
    const added = stream.events.filter((event) => event.type === 'response.output_item.added').length;
    return (
      added > 0 &&
      added === stream.events.filter((event) => event.type === 'response.output_item.done').length
    );
  });
  it.each(allDone.map((stream) => [stream.name, stream] as const))(
    'with the final output emptied, the streamed items stand in: %s',
    async (_name, stream) => {
      const events = structuredClone(stream.events);
      const final = events.findLast((event) => terminalTypes.has(event.type ?? ''));
      (final?.['response'] as SdkResponse).output = [];
      const doneItems = events
        .filter((event) => event.type === 'response.output_item.done')
        .map((event) => event['item']);
      const truth = { ...(final?.['response'] as SdkResponse), output: doneItems as Item[], output_text: '' };
      const response = await assembleOpenAIResponsesStream(eventsOf(events));
      expect(response.content).toEqual(truth.output.flatMap(expectedBlocks));
      expect(response.stopReason).toBe(stopReasonOf(truth));
    },
  );

  it('takes the SDK stream as it is, without a cast', async () => {
    const stream = finished[0] as RecordedStream;
    const response = await withReplay(stream.sse, async (client) =>
      assembleOpenAIResponsesStream(await client.responses.create({ model: 'm', input: 'hi', stream: true })),
    );
    expectAgrees(response, await truthOf(stream));
  });

  it('an in-stream error event (insufficient_quota) is a StreamError with the provider message on both paths', async () => {
    const stream = streams.find((s) => s.name.endsWith('openai-error.1.chunks.txt')) as RecordedStream;
    // The SDK surfaces the `error` event as an APIError without a status: classifyError cannot read it.
    const sdkError = await sdkFinal(stream.sse).catch((error: unknown) => error);
    expect(sdkError).toBeInstanceOf(OpenAI.APIError);
    expect(sdkError).toMatchObject({ status: undefined, code: 'insufficient_quota' });
    for (const outcome of [direct(stream), throughSdk(stream.sse)]) {
      const error = await outcome.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StreamError);
      expect(error).toMatchObject({ type: 'insufficient_quota', message: (sdkError as Error).message });
      // Billing, not load: no status, so classifyError calls it terminal rather than throttled.
      expect((error as StreamError).status).toBeUndefined();
    }
  });

  it('the recording with unparseable lines: the SDK throws on the first; reins says malformed_event (502)', async () => {
    const stream = streams.find((s) =>
      s.name.endsWith('parallel-tool-call-wrapper.1.chunks.txt'),
    ) as RecordedStream;
    expect(stream.malformed).toHaveLength(2);
    await expect(sdkFinal(stream.sse)).rejects.toThrow(/JSON/);
    const error = await throughSdk(stream.sse).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamError);
    expect(error).toMatchObject({ type: 'malformed_event', status: 502 });
    // The parseable events alone (no response.created, no response.completed) are a cut-off
    // stream: the complete call is kept, but the turn is interrupted and the loop runs nothing.
    const response = await direct(stream);
    expect(response.stopReason).toBe('interrupted');
    expect(response.content).toEqual([
      {
        type: 'tool_use',
        id: 'call_parallel',
        name: 'parallel',
        input: {
          tool_uses: [
            { recipient_name: 'functions.weather', parameters: { location: 'San Francisco' } },
            { recipient_name: 'functions.cityAttractions', parameters: { city: 'Rome' } },
          ],
        },
      },
    ]);
  });
});
