import type OpenAI from 'openai';
import { ConfigurationError } from '../errors/reins-error.js';
import type {
  AssistantMessage,
  DocumentBlock,
  ImageBlock,
  MediaSource,
  Message,
  ToolResultBlock,
  UserMessage,
} from '../model/content.js';
import {
  type Model,
  type ModelRequest,
  type ModelResponse,
  type ModelSettings,
  mergeSettings,
  type ToolChoice,
} from '../model/model.js';
import type { AssembleOptions } from '../stream/assemble-anthropic.js';
import {
  assembleOpenAIChatStream,
  type OpenAIChatChunk,
  openAIStreamError,
} from '../stream/assemble-openai.js';

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.ChatCompletionContentPart;
type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsStreaming;

export interface OpenAIModelOptions extends AssembleOptions {
  /** The model id, for example `gpt-5-mini`. */
  model: string;
  /**
   * Provider features applied to every call; a request's own `settings` override them field by
   * field. See {@link openAIModel} for how each maps onto Chat Completions.
   * @default {}
   */
  settings?: ModelSettings;
}

/**
 * reins messages as Chat Completions messages. Tool results become `role: 'tool'` messages, which
 * take text only, so their image and PDF attachments follow in one user message that names the call
 * they came from. Assistant thinking, redacted thinking and provider blocks are left out: Chat
 * Completions has no field that takes them back. Text blocks are joined with `''` (`textOf`).
 */
export function toOpenAIMessages(system: string, messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = system === '' ? [] : [{ role: 'system', content: system }];
  messages.forEach((message, at) => {
    if (message.role === 'user') out.push(...userMessages(message, at));
    else {
      const assistant = assistantMessage(message);
      if (assistant) out.push(assistant);
    }
  });
  return out;
}

function userMessages(message: UserMessage, at: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  const attachments: ContentPart[] = [];
  const parts: ContentPart[] = [];
  message.content.forEach((block, index) => {
    const path = `messages[${at}].content[${index}]`;
    if (block.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: block.toolUseId, content: block.content });
      attachments.push(...attachmentParts(block, path));
    } else if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else parts.push(mediaPart(block, path));
  });
  const content = [...attachments, ...parts];
  if (content.length === 0) return out;
  const only = content[0];
  out.push({
    role: 'user',
    content: content.length === 1 && only?.type === 'text' ? only.text : content,
  });
  return out;
}

function attachmentParts(block: ToolResultBlock, path: string): ContentPart[] {
  const media = block.attachments ?? [];
  if (media.length === 0) return [];
  return [
    { type: 'text', text: `Attachments of tool result ${block.toolUseId}:` },
    ...media.map((item, index) => mediaPart(item, `${path}.attachments[${index}]`)),
  ];
}

const dataUrl = (source: Extract<MediaSource, { type: 'base64' }>) =>
  `data:${source.mediaType};base64,${source.data}`;

/** An image as an `image_url` part; a PDF as a `file` part (Chat takes PDFs only, as data). */
function mediaPart(block: ImageBlock | DocumentBlock, path: string): ContentPart {
  if (block.type === 'image')
    return {
      type: 'image_url',
      image_url: { url: block.source.type === 'base64' ? dataUrl(block.source) : block.source.url },
    };
  const source = block.source;
  if (source.type !== 'base64' || source.mediaType !== 'application/pdf')
    throw new ConfigurationError(
      `${path}.source`,
      'OpenAI Chat Completions takes documents only as base64 PDFs (a `file` part); send a URL-sourced PDF as base64 and plain text as a text block',
    );
  return {
    type: 'file',
    file: { filename: block.title ?? 'document.pdf', file_data: dataUrl(source) },
  };
}

function assistantMessage(message: AssistantMessage): ChatMessage | undefined {
  let text = '';
  const calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use')
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: block.inputText ?? JSON.stringify(block.input ?? {}) },
      });
  }
  // A turn that held only thinking has nothing Chat Completions can take back.
  if (text === '' && calls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

function toolChoiceOf(choice: ToolChoice): OpenAI.Chat.ChatCompletionToolChoiceOption {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/** The request fields `settings` stand for, or a labeled error for what Chat Completions lacks. */
function settingsFields(settings: ModelSettings, hasTools: boolean): Partial<ChatParams> {
  const fields: Partial<ChatParams> = {};
  if (settings.temperature !== undefined) fields.temperature = settings.temperature;
  if (settings.topP !== undefined) fields.top_p = settings.topP;
  if (settings.stopSequences !== undefined && settings.stopSequences.length > 0)
    fields.stop = [...settings.stopSequences];
  if (settings.parallelToolCalls !== undefined && hasTools)
    fields.parallel_tool_calls = settings.parallelToolCalls;
  Object.assign(fields, thinkingFields(settings.thinking), cacheFields(settings.cache));
  return fields;
}

/**
 * `effort` is `reasoning_effort`. `false` sends nothing: whether a Chat model reasons is the model's
 * (set `providerOptions.openai.reasoning_effort: 'none'` to turn it down on models that take it).
 */
function thinkingFields(thinking: ModelSettings['thinking']): Partial<ChatParams> {
  if (!thinking) return {};
  if (thinking.budgetTokens !== undefined)
    throw new ConfigurationError(
      'settings.thinking.budgetTokens',
      'OpenAI Chat Completions has no thinking budget; set settings.thinking.effort (minimal, low, medium or high) instead',
    );
  return thinking.effort === undefined ? {} : { reasoning_effort: thinking.effort };
}

/**
 * OpenAI caches every long enough prefix by itself, so the `system`/`tools`/`messages` breakpoints
 * (and `false`) change nothing and are accepted silently; the cache works either way. `key` routes
 * requests to the same cache (`prompt_cache_key`); `ttl: '1h'` asks for extended retention
 * (`prompt_cache_retention: '24h'`), the only longer lifetime Chat Completions offers.
 */
function cacheFields(cache: ModelSettings['cache']): Partial<ChatParams> {
  if (!cache) return {};
  const fields: Partial<ChatParams> = {};
  if (cache.key !== undefined) fields.prompt_cache_key = cache.key;
  if (cache.ttl === '1h') fields.prompt_cache_retention = '24h';
  return fields;
}

/** The streaming request for one call: the mapped settings, then `providerOptions.openai` last. */
export function openAIChatParams(model: string, request: ModelRequest, settings: ModelSettings): ChatParams {
  const hasTools = request.tools.length > 0;
  const params: ChatParams = {
    model,
    messages: toOpenAIMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
    ...settingsFields(settings, hasTools),
  };
  if (request.maxOutputTokens !== undefined) params.max_completion_tokens = request.maxOutputTokens;
  if (hasTools) {
    params.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
    params.tool_choice = toolChoiceOf(request.toolChoice);
  }
  return { ...params, ...settings.providerOptions?.['openai'] } as ChatParams;
}

/**
 * The SDK throws an OpenAI-compatible `error` chunk as an `APIError` with no status; it becomes a
 * `StreamError` that keeps the provider's message and code, so `classifyError` can read it.
 */
async function* withStreamErrors(chunks: AsyncIterable<OpenAIChatChunk>): AsyncGenerator<OpenAIChatChunk> {
  try {
    yield* chunks;
  } catch (error) {
    const thrown = error as { status?: unknown; error?: unknown };
    if (typeof error === 'object' && error !== null && thrown.status === undefined && thrown.error)
      throw openAIStreamError(thrown.error);
    throw error;
  }
}

/**
 * The reins `Model` over an official `openai` client (Chat Completions, streamed, with usage).
 * Create the client with `maxRetries: 0` and wrap this model in `retryingModel` to retry at one layer.
 *
 * Settings map onto the request as `toolChoice` → `tool_choice`, `parallelToolCalls` →
 * `parallel_tool_calls` (with tools only), `stopSequences` → `stop`, `temperature`, `topP` → `top_p`,
 * `thinking.effort` → `reasoning_effort`, `cache.key` → `prompt_cache_key`, `cache.ttl: '1h'` →
 * `prompt_cache_retention: '24h'`, `providerOptions.openai` merged into the body last.
 * `thinking.budgetTokens` has no Chat equivalent and is a `ConfigurationError`.
 *
 * @example
 * const model = openAIModel(new OpenAI({ maxRetries: 0 }), {
 *   model: 'gpt-5-mini',
 *   settings: { thinking: { effort: 'low' } },
 * });
 */
export function openAIModel(client: OpenAI, options: OpenAIModelOptions): Model {
  return {
    name: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const settings = mergeSettings(options.settings, request.settings);
      const params = openAIChatParams(options.model, request, settings);
      const stream = await client.chat.completions.create(
        params,
        request.signal ? { signal: request.signal } : {},
      );
      return assembleOpenAIChatStream(
        withStreamErrors(stream as unknown as AsyncIterable<OpenAIChatChunk>),
        options,
      );
    },
  };
}
