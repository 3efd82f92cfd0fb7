import type {
  LanguageModelV3StreamPart,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
} from '@ai-sdk/provider';
import type { AssistantBlock, JsonValue, MediaSource } from '../model/content.js';
import type { ModelResponse, StopReason, Usage } from '../model/model.js';
import type { AssembleOptions } from '../stream/assemble-anthropic.js';
import { createPartialJsonParser, type PartialJsonParser } from '../stream/parse-partial-json.js';
import { StreamError } from '../stream/stream-error.js';
import { providerBlockTag, thinkingBlockTag } from './block-provider.js';

/** A stream part of either specification (V3's are a subset of V4's, but for the finish reason). */
export type AiSdkStreamPart = LanguageModelV4StreamPart | LanguageModelV3StreamPart;

export interface AssembleAiSdkOptions extends AssembleOptions {
  /**
   * The provider's `providerOptions` key (`anthropic`): thinking and provider blocks are tagged
   * with it (see block-provider.ts) and read their metadata under it.
   */
  providerKey: string;
  /** Stops reading when aborted: the abort is thrown, not read as a dropped connection. */
  signal?: AbortSignal;
}

type Entry =
  | { kind: 'text'; block: { type: 'text'; text: string; citations?: JsonValue[] } }
  | { kind: 'reasoning'; text: string; metadata: SharedV4ProviderMetadata }
  | { kind: 'tool-input'; id: string; name: string; raw: string; parser: PartialJsonParser }
  | { kind: 'done'; block: AssistantBlock };

const unifiedStopReasons: Record<string, StopReason> = {
  stop: 'end_turn',
  'tool-calls': 'tool_use',
  length: 'max_tokens',
  'content-filter': 'refusal',
  interrupted: 'interrupted',
};
/** Raw reasons the unified one flattens (Anthropic's, mostly), kept because the loop acts on them. */
const rawStopReasons: Record<string, StopReason> = {
  stop_sequence: 'stop_sequence',
  pause_turn: 'pause_turn',
  refusal: 'refusal',
  model_context_window_exceeded: 'context_window_exceeded',
};

/**
 * Turns an AI SDK `doStream` stream into the loop's response. Text and tool arguments show live
 * (`onText`, `onToolInput`); a tool call gets its input from the final `tool-call` part, parsed
 * whole (`''` is `{}`; text that is not JSON stays in `inputText`, and the loop executes nothing).
 * Reasoning keeps its provider metadata so it goes back unchanged; provider-executed tool calls and
 * results, files and sources become provider blocks. An `error` part throws a `StreamError`; a
 * stream that ends (or drops) without `finish` is `interrupted`.
 */
export async function assembleAiSdkStream(
  stream: ReadableStream<AiSdkStreamPart>,
  options: AssembleAiSdkOptions,
): Promise<ModelResponse> {
  const entries: Entry[] = [];
  const open = new Map<string, Entry>();
  let finish: { finishReason: LanguageModelV4FinishReason | string; usage: LanguageModelV4Usage } | undefined;
  let id: string | undefined;
  let model: string | undefined;
  const providerTag = providerBlockTag(options.providerKey);
  const provider = (block: Omit<Extract<AssistantBlock, { type: 'provider' }>, 'type' | 'provider'>) =>
    entries.push({ kind: 'done', block: { type: 'provider', provider: providerTag, ...block } });
  const entryOf = <K extends Entry['kind']>(
    key: string,
    kind: K,
    make: () => Extract<Entry, { kind: K }>,
  ) => {
    const found = open.get(key);
    if (found?.kind === kind) return found as Extract<Entry, { kind: K }>;
    const made = make();
    entries.push(made);
    open.set(key, made);
    return made;
  };

  const reader = stream.getReader();
  let received = 0;
  let done = false;
  try {
    while (true) {
      let next: ReadableStreamReadResult<AiSdkStreamPart>;
      try {
        next = await reader.read();
      } catch (error) {
        // A connection dropped mid-stream: keep what arrived; the missing finish labels it.
        if (received === 0 || options.signal?.aborted) throw error;
        break;
      }
      if (next.done) {
        done = true;
        break;
      }
      received++;
      const part = next.value;
      switch (part.type) {
        case 'text-start':
        case 'text-delta': {
          const entry = entryOf(`text:${part.id}`, 'text', () => ({
            kind: 'text',
            block: { type: 'text', text: '' },
          }));
          if (part.type === 'text-delta' && part.delta !== '') {
            entry.block.text += part.delta;
            options.onText?.(part.delta);
          }
          break;
        }
        case 'text-end': {
          const citations = 'citations' in part ? part.citations : undefined;
          const entry = open.get(`text:${part.id}`);
          if (entry?.kind === 'text' && citations && citations.length > 0)
            entry.block.citations = jsonOf(citations) as JsonValue[];
          open.delete(`text:${part.id}`);
          break;
        }
        case 'reasoning-start':
        case 'reasoning-delta':
        case 'reasoning-end': {
          const entry = entryOf(`reasoning:${part.id}`, 'reasoning', () => ({
            kind: 'reasoning',
            text: '',
            metadata: {},
          }));
          if (part.type === 'reasoning-delta') entry.text += part.delta;
          // Anthropic sends the signature on a delta, OpenAI the encrypted content on the end.
          for (const [key, fields] of Object.entries(part.providerMetadata ?? {}))
            entry.metadata[key] = { ...entry.metadata[key], ...fields };
          if (part.type === 'reasoning-end') open.delete(`reasoning:${part.id}`);
          break;
        }
        case 'tool-input-start': {
          const entry: Entry = {
            kind: 'tool-input',
            id: part.id,
            name: part.toolName,
            raw: '',
            parser: createPartialJsonParser(),
          };
          entries.push(entry);
          open.set(`tool:${part.id}`, entry);
          break;
        }
        case 'tool-input-delta': {
          const entry = open.get(`tool:${part.id}`);
          if (entry?.kind !== 'tool-input' || part.delta === '') break;
          entry.raw += part.delta;
          entry.parser.push(part.delta);
          options.onToolInput?.({ callId: entry.id, name: entry.name, display: entry.parser.snapshot() });
          break;
        }
        case 'tool-input-end':
          break;
        case 'tool-call': {
          const block: AssistantBlock = part.providerExecuted
            ? {
                type: 'provider',
                provider: providerTag,
                kind: 'tool-call',
                raw: jsonOf({
                  type: 'tool-call',
                  toolCallId: part.toolCallId,
                  toolName: part.toolName,
                  input: parsedInput(part.input).input ?? {},
                  providerExecuted: true,
                  ...(part.providerMetadata ? { providerOptions: part.providerMetadata } : {}),
                }) as { [key: string]: JsonValue },
              }
            : { type: 'tool_use', id: part.toolCallId, name: part.toolName, ...parsedInput(part.input) };
          // The call takes the place its streamed input held.
          const entry = open.get(`tool:${part.toolCallId}`);
          open.delete(`tool:${part.toolCallId}`);
          const at = entry ? entries.indexOf(entry) : -1;
          if (at === -1) entries.push({ kind: 'done', block });
          else entries[at] = { kind: 'done', block };
          break;
        }
        case 'tool-result':
          provider({
            kind: 'tool-result',
            raw: jsonOf({
              type: 'tool-result',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              output: { type: part.isError ? 'error-json' : 'json', value: part.result },
              ...(part.providerMetadata ? { providerOptions: part.providerMetadata } : {}),
            }) as { [key: string]: JsonValue },
          });
          break;
        case 'file':
        case 'reasoning-file': {
          const source = mediaSourceOf(part.data, part.mediaType);
          if (part.type === 'file' && part.mediaType.startsWith('image/'))
            entries.push({ kind: 'done', block: { type: 'image', source } });
          else
            provider({
              kind: part.type,
              raw: jsonOf({
                type: part.type,
                mediaType: part.mediaType,
                data:
                  source.type === 'base64'
                    ? { type: 'data', data: source.data }
                    : { type: 'url', url: source.url },
                ...(part.providerMetadata ? { providerOptions: part.providerMetadata } : {}),
              }) as { [key: string]: JsonValue },
            });
          break;
        }
        case 'custom':
          provider({
            kind: 'custom',
            raw: jsonOf({
              type: 'custom',
              kind: part.kind,
              ...(part.providerMetadata ? { providerOptions: part.providerMetadata } : {}),
            }) as { [key: string]: JsonValue },
          });
          break;
        case 'source':
        case 'tool-approval-request':
          provider({ kind: part.type, raw: jsonOf(part) as { [key: string]: JsonValue } });
          break;
        case 'response-metadata':
          id = part.id ?? id;
          model = part.modelId ?? model;
          break;
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw streamErrorOf(part.error);
        default:
          // stream-start (warnings), raw chunks, pings and anything newer: nothing to keep.
          break;
      }
    }
  } finally {
    if (!done) reader.cancel().catch(() => {});
    reader.releaseLock();
  }

  const content: AssistantBlock[] = [];
  let cutOff = false;
  for (const entry of entries) {
    if (entry.kind === 'done') content.push(entry.block);
    else if (entry.kind === 'text') content.push(entry.block);
    else if (entry.kind === 'reasoning') content.push(reasoningBlock(entry, options.providerKey));
    else {
      // Arguments that began but never became a call: a cut-off stream.
      cutOff = true;
      content.push({
        type: 'tool_use',
        id: entry.id,
        name: entry.name,
        input: undefined,
        inputText: entry.raw,
      });
    }
  }
  let stopReason: StopReason = finish === undefined ? 'interrupted' : stopReasonOf(finish.finishReason);
  if (cutOff && stopReason !== 'max_tokens') stopReason = 'interrupted';
  const response: ModelResponse = { content, stopReason };
  const usage = usageOf(finish?.usage);
  if (usage) response.usage = usage;
  if (id !== undefined) response.id = id;
  if (model !== undefined) response.model = model;
  return response;
}

function parsedInput(text: string): { input: unknown; inputText?: string } {
  if (text.trim() === '') return { input: {} };
  try {
    return { input: JSON.parse(text) };
  } catch {
    return { input: undefined, inputText: text };
  }
}

function reasoningBlock(entry: Extract<Entry, { kind: 'reasoning' }>, providerKey: string): AssistantBlock {
  const own = entry.metadata[providerKey] ?? {};
  const provider = thinkingBlockTag(providerKey);
  if (typeof own['redactedData'] === 'string')
    return { type: 'redacted_thinking', data: own['redactedData'], provider };
  const block: AssistantBlock = { type: 'thinking', thinking: entry.text, provider };
  if (typeof own['signature'] === 'string') block.signature = own['signature'];
  if (Object.keys(entry.metadata).length > 0)
    block.providerData = { providerMetadata: jsonOf(entry.metadata) as { [key: string]: JsonValue } };
  return block;
}

function stopReasonOf(reason: LanguageModelV4FinishReason | string): StopReason {
  // LanguageModelV2 sent the unified reason as a bare string.
  const { unified, raw } = typeof reason === 'string' ? { unified: reason, raw: undefined } : reason;
  return (raw !== undefined ? rawStopReasons[raw] : undefined) ?? unifiedStopReasons[unified] ?? 'other';
}

/**
 * The AI SDK's usage in reins's convention: `inputTokens` is the uncached part (the provider's
 * `noCache`, else the total less cache reads and writes), cache reads and writes apart, reasoning
 * shown (already inside `outputTokens`).
 */
export function usageOf(usage: LanguageModelV4Usage | undefined): Usage | undefined {
  const input = usage?.inputTokens;
  const output = usage?.outputTokens;
  // A provider that reported no counts at all: the loop estimates rather than billing zero.
  if (
    input?.total === undefined &&
    input?.noCache === undefined &&
    output?.total === undefined &&
    output?.text === undefined
  )
    return undefined;
  const cacheReadTokens = input?.cacheRead ?? 0;
  const cacheWriteTokens = input?.cacheWrite ?? 0;
  const reasoning = output?.reasoning;
  let outputTokens = output?.total ?? (output?.text ?? 0) + (reasoning ?? 0);
  // Reasoning the provider counted beside its output total, not inside it, is added back.
  if (
    reasoning !== undefined &&
    reasoning > 0 &&
    output?.total !== undefined &&
    reasonedBeside(usage, reasoning)
  )
    outputTokens += reasoning;
  const result: Usage = {
    inputTokens: input?.noCache ?? Math.max(0, (input?.total ?? 0) - cacheReadTokens - cacheWriteTokens),
    outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
  };
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  return result;
}

/**
 * Whether `outputTokens.reasoning` lies outside `outputTokens.total`: more reasoning than the whole
 * output, or a Chat Completions `raw` usage whose `total_tokens` is prompt + completion + reasoning
 * (xAI: the rule the native Chat adapter applies). `@ai-sdk/openai` passes `completion_tokens`
 * through as the total, so without this the output (and the budget) would miss the reasoning.
 */
function reasonedBeside(usage: LanguageModelV4Usage | undefined, reasoning: number): boolean {
  const total = usage?.outputTokens.total ?? 0;
  if (reasoning > total) return true;
  const raw = (usage as { raw?: { [key: string]: unknown } } | undefined)?.raw;
  const prompt = raw?.['prompt_tokens'];
  const completion = raw?.['completion_tokens'];
  return (
    typeof prompt === 'number' &&
    completion === total &&
    typeof raw?.['total_tokens'] === 'number' &&
    raw['total_tokens'] === prompt + total + reasoning
  );
}

/**
 * An `error` part as a `StreamError`: V4 providers send a normalized error (`type`, `message`,
 * `statusCode`, `data`); others send the provider's error body or an `Error`.
 */
function streamErrorOf(error: unknown): StreamError {
  if (error instanceof StreamError) return error;
  // A frame that was not JSON (the provider's parser says `AI_JSONParseError`): a garbled upstream
  // response, the 502 `malformed_event` the native adapters give, worth another attempt.
  if ((error as { name?: unknown } | null)?.name === 'AI_JSONParseError')
    return new StreamError(
      'malformed_event',
      `the provider sent an event that is not JSON: ${(error as Error).message}`,
      { status: 502, body: error },
    );
  const value = (error !== null && typeof error === 'object' ? error : {}) as {
    type?: unknown;
    code?: unknown;
    message?: unknown;
    statusCode?: unknown;
    status?: unknown;
    data?: unknown;
    name?: unknown;
  };
  const type =
    typeof value.type === 'string'
      ? value.type
      : typeof value.code === 'string'
        ? value.code
        : typeof value.name === 'string'
          ? value.name
          : 'stream_error';
  const message = typeof value.message === 'string' ? value.message : String(error);
  const status =
    typeof value.statusCode === 'number'
      ? value.statusCode
      : typeof value.status === 'number'
        ? value.status
        : undefined;
  return new StreamError(type, message, {
    ...(status !== undefined ? { status } : {}),
    body: value.data !== undefined ? value.data : error,
  });
}

/** A value as plain JSON: dates become strings, bytes and functions drop out. */
function jsonOf(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
}

/** A generated file's bytes: V3 sends base64 or bytes, V4 tags them as data or a URL. */
function mediaSourceOf(
  data: string | Uint8Array | { type: 'data'; data: string | Uint8Array } | { type: 'url'; url: URL },
  mediaType: string,
): MediaSource {
  if (typeof data === 'string') return { type: 'base64', mediaType, data };
  if (data instanceof Uint8Array) return { type: 'base64', mediaType, data: base64Of(data) };
  if (data.type === 'url') return { type: 'url', url: data.url.href, mediaType };
  return mediaSourceOf(data.data, mediaType);
}

function base64Of(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
