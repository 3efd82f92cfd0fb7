import type { AssistantBlock } from '../model/content.js';
import type { ModelResponse, StopReason, Usage } from '../model/model.js';
import type { AssembleOptions } from './assemble-anthropic.js';
import { createPartialJsonParser, type PartialJsonParser } from './parse-partial-json.js';
import { rethrowUnlessDropped, StreamError, statusOfErrorType } from './stream-error.js';

/** One `tool_calls[]` entry of a Chat Completions delta. */
export interface OpenAIChatToolCallDelta {
  /** Missing on some OpenAI-compatible endpoints (Gemini's); see {@link assembleOpenAIChatStream}. */
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** The usage object of a Chat Completions chunk, with the fields reins reads. */
export interface OpenAIChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  /** DeepSeek's name for cached prompt tokens. */
  prompt_cache_hit_tokens?: number;
}

/**
 * The OpenAI Chat Completions stream chunks reins reads (the SDK's `ChatCompletionChunk`,
 * structurally, plus what OpenAI-compatible providers add: `reasoning_content` / `reasoning`
 * deltas, an `error` chunk). Unknown fields are ignored.
 */
export interface OpenAIChatChunk {
  id?: string;
  model?: string;
  choices?: {
    index?: number;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      /** DeepSeek and xAI reasoning text. */
      reasoning_content?: string | null;
      /** OpenRouter reasoning text. */
      reasoning?: string | null;
      tool_calls?: OpenAIChatToolCallDelta[];
    };
    finish_reason?: string | null;
  }[];
  usage?: OpenAIChatUsage | null;
  /** An OpenAI-compatible provider's in-stream error (Groq, OpenRouter). */
  error?: unknown;
}

const finishReasons: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
  function_call: 'tool_use',
};

interface ChatCall {
  id: string;
  name: string;
  raw: string;
  parser: PartialJsonParser;
}

/** Everything read from the stream so far: one explicit value the stages below update. */
interface ChatReading {
  text: string;
  refusal: string;
  reasoning: string;
  /** By the provider's index: a Map, so a hostile index (4e9) costs one entry, not a sparse walk. */
  calls: Map<number, ChatCall>;
  finish?: string;
  id?: string;
  model?: string;
  /** Absent until a chunk reports usage: a server that never does leaves the loop to estimate. */
  usage?: Usage;
}

/**
 * Turns an OpenAI Chat Completions stream into the loop's response: tool-call deltas are gathered
 * by index, shown live through `onToolInput`, and parsed whole only when the stream finished. A
 * stream without a finish reason is `interrupted`; `length` is `max_tokens`; either way a call
 * whose JSON was cut off carries only its raw text, and the loop executes nothing.
 *
 * Differences from the SDK's accumulator, on purpose: the first non-empty `id`/`model` is kept (Azure
 * opens with empty ones); reasoning deltas are concatenated into a `thinking` block (the SDK keeps
 * only the last one); a `tool_calls[]` entry without `index` is a new call when it brings a new id
 * and a continuation of the last call otherwise (the AI SDK appends, the SDK drops it); an `error`
 * chunk is a {@link StreamError}, even after partial output.
 */
export async function assembleOpenAIChatStream(
  chunks: AsyncIterable<OpenAIChatChunk>,
  options: AssembleOptions = {},
): Promise<ModelResponse> {
  const reading: ChatReading = {
    text: '',
    refusal: '',
    reasoning: '',
    calls: new Map(),
  };
  let received = 0;
  try {
    for await (const chunk of chunks) {
      received++;
      readChunk(reading, chunk, options);
    }
  } catch (error) {
    // A provider error is the caller's to classify (the SDK's `APIError` for an `error` chunk as a
    // StreamError); a dropped connection keeps what arrived and the missing finish reason labels it.
    rethrowUnlessDropped(error, received, (body) => openAIStreamError(body));
    delete reading.finish;
  }
  return responseOf(reading);
}

function readChunk(reading: ChatReading, chunk: OpenAIChatChunk, options: AssembleOptions): void {
  if (chunk.error) throw openAIStreamError(chunk.error, chunk);
  if (!reading.id && chunk.id) reading.id = chunk.id;
  if (!reading.model && chunk.model) reading.model = chunk.model;
  if (chunk.usage) reading.usage = usageOf(chunk.usage);
  // Only the first choice: the loop never asks for `n > 1`.
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    const delta = choice.delta ?? {};
    readDelta(reading, delta, options);
    for (const part of delta.tool_calls ?? []) readToolCallDelta(reading, part, options);
    if (choice.finish_reason) reading.finish = choice.finish_reason;
  }
}

type ChatDelta = NonNullable<NonNullable<OpenAIChatChunk['choices']>[number]['delta']>;

function readDelta(reading: ChatReading, delta: ChatDelta, options: AssembleOptions): void {
  if (typeof delta.content === 'string' && delta.content !== '') {
    reading.text += delta.content;
    options.onText?.(delta.content);
  }
  if (typeof delta.refusal === 'string') reading.refusal += delta.refusal;
  const reasoning = delta.reasoning_content ?? delta.reasoning;
  if (typeof reasoning === 'string') reading.reasoning += reasoning;
}

function readToolCallDelta(
  reading: ChatReading,
  part: OpenAIChatToolCallDelta,
  options: AssembleOptions,
): void {
  const at = slotOf(reading.calls, part);
  let call = reading.calls.get(at);
  if (!call) {
    call = { id: part.id || `call_${at}`, name: '', raw: '', parser: createPartialJsonParser() };
    reading.calls.set(at, call);
  } else if (part.id) call.id = part.id;
  // Assigned, not appended, as the SDK does: some providers resend the whole name in every chunk.
  if (part.function?.name) call.name = part.function.name;
  const fragment = part.function?.arguments ?? '';
  if (fragment === '') return;
  call.raw += fragment;
  call.parser.push(fragment);
  options.onToolInput?.({ callId: call.id, name: call.name, display: call.parser.snapshot() });
}

/**
 * Where a tool-call delta goes. Without `index` (Gemini's OpenAI-compatible endpoint sends each
 * call whole, with its id and no index): a known id is that call, a new id or the first delta is a
 * new call, and a delta with no id continues the last call.
 */
function slotOf(calls: ReadonlyMap<number, ChatCall>, part: OpenAIChatToolCallDelta): number {
  if (typeof part.index === 'number') return part.index;
  let last = -1;
  for (const [at, call] of calls) {
    if (part.id && call.id === part.id) return at;
    last = Math.max(last, at);
  }
  return part.id ? last + 1 : Math.max(last, 0);
}

/**
 * Chat usage as reins counts it: `inputTokens` is the uncached prompt. xAI reports reasoning
 * tokens outside `completion_tokens` (its `total_tokens` adds them); they are billed as output,
 * so they are added back, keeping `reasoningTokens` a part of `outputTokens`.
 */
function usageOf(raw: OpenAIChatUsage): Usage {
  const prompt = raw.prompt_tokens ?? 0;
  const completion = raw.completion_tokens ?? 0;
  const cached = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? 0;
  const usage: Usage = {
    inputTokens: prompt - cached,
    outputTokens: completion,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
  const reasoning = raw.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning !== 'number') return usage;
  usage.reasoningTokens = reasoning;
  if (reasoning > 0 && raw.total_tokens === prompt + completion + reasoning) usage.outputTokens += reasoning;
  return usage;
}

function responseOf(reading: ChatReading): ModelResponse {
  const content: AssistantBlock[] = [];
  if (reading.reasoning !== '')
    content.push({ type: 'thinking', thinking: reading.reasoning, provider: 'openai-compatible' });
  if (reading.text !== '') content.push({ type: 'text', text: reading.text });
  if (reading.refusal !== '') content.push({ type: 'text', text: reading.refusal });
  let cutOff = false;
  for (const at of [...reading.calls.keys()].sort((a, b) => a - b)) {
    const call = reading.calls.get(at) as ChatCall;
    const block = toolUseOf(call);
    if (block.cutOff) cutOff = true;
    content.push(block.block);
  }
  const response: ModelResponse = {
    content,
    stopReason: stopReasonOf(reading, cutOff),
  };
  if (reading.usage) response.usage = reading.usage;
  if (reading.id !== undefined) response.id = reading.id;
  if (reading.model !== undefined) response.model = reading.model;
  return response;
}

function toolUseOf(call: ChatCall): { block: AssistantBlock; cutOff: boolean } {
  // A call with no argument text at all is a zero-argument call.
  const result = call.raw.trim() === '' ? ({ status: 'complete', value: {} } as const) : call.parser.finish();
  if (result.status === 'complete')
    return { block: { type: 'tool_use', id: call.id, name: call.name, input: result.value }, cutOff: false };
  return {
    block: { type: 'tool_use', id: call.id, name: call.name, input: undefined, inputText: call.raw },
    cutOff: result.status === 'truncated',
  };
}

function stopReasonOf(reading: ChatReading, cutOff: boolean): StopReason {
  if (reading.finish === undefined) return 'interrupted';
  // A refusal arrives with `finish_reason: stop`; the SDK's `message.refusal` is what says so.
  if (reading.refusal !== '') return 'refusal';
  const mapped = finishReasons[reading.finish] ?? 'other';
  return cutOff && mapped !== 'max_tokens' ? 'interrupted' : mapped;
}

/**
 * The {@link StreamError} for an OpenAI-compatible error body (`{ message, type, code }`), sent as an
 * `error` chunk or thrown by the SDK as an `APIError` without a status. The more specific of `code`
 * and `type` names it; a numeric `code` (OpenRouter) is the HTTP status it stands for.
 */
export function openAIStreamError(error: unknown, body: unknown = { error }): StreamError {
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const code = fields['code'];
  const type = typeof fields['type'] === 'string' ? fields['type'] : undefined;
  const named = typeof code === 'string' ? code : undefined;
  const name =
    named !== undefined && statusOfErrorType(named) !== undefined ? named : (type ?? named ?? 'error');
  const message =
    typeof fields['message'] === 'string'
      ? fields['message']
      : typeof error === 'string'
        ? error
        : 'stream error';
  const status = typeof code === 'number' && code >= 100 && code < 600 ? code : statusOfErrorType(name);
  return new StreamError(name, message, status === undefined ? { body } : { status, body });
}
