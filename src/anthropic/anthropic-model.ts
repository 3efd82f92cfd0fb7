import type Anthropic from '@anthropic-ai/sdk';
import { ConfigurationError } from '../errors/reins-error.js';
import { callSettings } from '../model/check-settings.js';
import type { Model, ModelRequest, ModelResponse, ModelSettings, ToolChoice } from '../model/model.js';
import {
  type AnthropicStreamEvent,
  type AssembleOptions,
  assembleAnthropicStream,
} from '../stream/assemble-anthropic.js';
import { anthropicMessagesWithPositions, containerOf } from './anthropic-messages.js';

export { toAnthropicMessages } from './anthropic-messages.js';

export interface AnthropicModelOptions extends AssembleOptions {
  /** The model id, for example `claude-sonnet-4-5`. */
  model: string;
  /** Used when the request sets no `maxOutputTokens` (the API requires one). @default 4096 */
  maxTokens?: number;
  /**
   * Defaults for every call, beneath the run's and the step's settings. Prompt caching is on by
   * default for the system prompt and the tools (the stable prefix); `cache: false` turns it off.
   */
  settings?: ModelSettings;
}

type Params = Anthropic.MessageCreateParamsStreaming;
/** The Messages API allows four cache breakpoints per request. */
const maxBreakpoints = 4;
const efforts = new Set(['low', 'medium', 'high']);

function fail(field: string, message: string): never {
  throw new ConfigurationError(`settings.${field}`, message);
}

function toolChoiceParam(choice: ToolChoice, parallel: boolean | undefined): Anthropic.ToolChoice {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...noParallel };
  if (choice === 'auto') return { type: 'auto', ...noParallel };
  return { type: 'tool', name: choice.name, ...noParallel };
}

function thinkingParams(params: Params, thinking: ModelSettings['thinking']) {
  if (thinking === undefined) return;
  if (thinking === false) {
    params.thinking = { type: 'disabled' };
    return;
  }
  const { budgetTokens, effort } = thinking;
  if (budgetTokens !== undefined) {
    if (!Number.isInteger(budgetTokens) || budgetTokens < 1_024)
      fail('thinking.budgetTokens', `must be a whole number of at least 1,024, got ${budgetTokens}`);
    if (budgetTokens >= params.max_tokens)
      fail('thinking.budgetTokens', `must be less than maxOutputTokens (${params.max_tokens})`);
    params.thinking = { type: 'enabled', budget_tokens: budgetTokens };
  } else params.thinking = { type: 'adaptive' };
  if (effort !== undefined) {
    if (!efforts.has(effort)) fail('thinking.effort', `Anthropic accepts low, medium or high, got ${effort}`);
    params.output_config = { ...params.output_config, effort: effort as 'low' | 'medium' | 'high' };
  }
}

/** Cache breakpoints on the stable prefix (system, tools) and on the chosen messages. */
function cacheParams(params: Params, cache: ModelSettings['cache'], positions: readonly number[]) {
  if (cache === false) return;
  const control: Anthropic.CacheControlEphemeral = {
    type: 'ephemeral',
    ...(cache?.ttl ? { ttl: cache.ttl } : {}),
  };
  if (cache?.key !== undefined)
    fail('cache.key', 'Anthropic has no cache key; its cache matches on the prefix');
  let used = 0;
  const system = params.system;
  if (cache?.system !== false && typeof system === 'string' && system !== '') {
    params.system = [{ type: 'text', text: system, cache_control: control }];
    used++;
  }
  const lastTool = params.tools?.at(-1);
  if (cache?.tools !== false && lastTool) {
    (lastTool as Anthropic.Tool).cache_control = control;
    used++;
  }
  const chosen = cache?.messages ?? 'none';
  // Indices name reins messages; `positions` says where each landed in the request.
  const indices =
    chosen === 'none'
      ? []
      : chosen === 'last'
        ? [params.messages.length - 1]
        : chosen.map((index) => {
            const at = Number.isInteger(index) ? positions[index] : undefined;
            if (at === undefined)
              fail('cache.messages', `no message at index ${index} (there are ${positions.length})`);
            if (at < 0) fail('cache.messages', `message ${index} has nothing Anthropic can read to mark`);
            return at;
          });
  if (used + indices.length > maxBreakpoints)
    fail(
      'cache.messages',
      `at most ${maxBreakpoints} cache breakpoints fit in a request, ${used} are on system and tools`,
    );
  for (const index of indices) {
    const message = params.messages[index];
    if (!message)
      fail('cache.messages', `no message at index ${index} (there are ${params.messages.length})`);
    const last = Array.isArray(message.content) ? message.content.at(-1) : undefined;
    if (last && last.type !== 'thinking' && last.type !== 'redacted_thinking')
      (last as { cache_control?: Anthropic.CacheControlEphemeral }).cache_control = control;
  }
}

/** The Messages API request for one call. */
export function anthropicParams(request: ModelRequest, options: AnthropicModelOptions): Params {
  const settings = callSettings(options.settings, request.settings);
  const sent = anthropicMessagesWithPositions(request.messages);
  const params: Params = {
    model: options.model,
    max_tokens: request.maxOutputTokens ?? options.maxTokens ?? 4_096,
    messages: sent.messages,
    stream: true,
  };
  if (request.system !== '') params.system = request.system;
  const container = containerOf(request.messages);
  if (container !== undefined) params.container = container;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
    }));
    params.tool_choice = toolChoiceParam(request.toolChoice, settings.parallelToolCalls);
  } else if (request.toolChoice !== 'auto' && request.toolChoice !== 'none')
    throw new ConfigurationError('toolChoice', 'a tool is required but no tools are offered this step');
  thinkingParams(params, settings.thinking);
  if (settings.stopSequences) params.stop_sequences = [...settings.stopSequences];
  // The Messages API (SDK 1.x) has no sampling parameters any more.
  if (settings.temperature !== undefined)
    fail(
      'temperature',
      'the Anthropic Messages API takes no temperature; use thinking.effort to steer the model',
    );
  if (settings.topP !== undefined) fail('topP', 'the Anthropic Messages API takes no top_p');
  cacheParams(params, settings.cache, sent.positions);
  return { ...params, ...(settings.providerOptions?.['anthropic'] as Partial<Params> | undefined) };
}

/**
 * The reins `Model` over an official `@anthropic-ai/sdk` client: streams every call, shows tool
 * arguments as they arrive, and hands the loop strictly parsed input only. SDK errors reach the
 * loop as they are (`status`, `headers`, the error body), which `classifyError` reads. Retry at one
 * layer: create the client with `maxRetries: 0` and wrap this model in `retryingModel`.
 *
 * @example
 * const model = anthropicModel(new Anthropic({ maxRetries: 0 }), { model: 'claude-sonnet-4-5' });
 */
export function anthropicModel(client: Anthropic, options: AnthropicModelOptions): Model {
  return {
    name: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const params = anthropicParams(request, options);
      const stream = await client.messages.create(params, request.signal ? { signal: request.signal } : {});
      return assembleAnthropicStream(stream as AsyncIterable<AnthropicStreamEvent>, options);
    },
  };
}
