import type OpenAI from 'openai';
import { ConfigurationError } from '../errors/reins-error.js';
import { callSettings } from '../model/check-settings.js';
import type { Model, ModelRequest, ModelResponse, ModelSettings, ToolChoice } from '../model/model.js';
import type { AssembleOptions } from '../stream/assemble-anthropic.js';
import { assembleOpenAIChatStream, type OpenAIChatChunk } from '../stream/assemble-openai.js';
import { toOpenAIMessages } from './openai-messages.js';

export { toOpenAIMessages } from './openai-messages.js';

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
      const settings = callSettings(options.settings, request.settings);
      const params = openAIChatParams(options.model, request, settings);
      const stream = await client.chat.completions.create(
        params,
        request.signal ? { signal: request.signal } : {},
      );
      // The assembler turns the SDK's errors for in-stream `error` chunks into StreamErrors.
      return assembleOpenAIChatStream(stream as unknown as AsyncIterable<OpenAIChatChunk>, options);
    },
  };
}
