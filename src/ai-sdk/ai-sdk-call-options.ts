import type {
  JSONObject,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4ToolChoice,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import { ConfigurationError } from '../errors/reins-error.js';
import type { ModelRequest, ModelSettings, ToolChoice } from '../model/model.js';
import { placeAnthropicBreakpoints } from './anthropic-cache-breakpoints.js';
import { toAiSdkPrompt } from './to-ai-sdk-prompt.js';

/** The part of a language model the call options depend on. */
export interface AiSdkModelIdentity {
  readonly specificationVersion: 'v3' | 'v4';
  /** The provider id, e.g. `anthropic.messages`, `openai.responses`, `google.generative-ai`. */
  readonly provider: string;
}

/**
 * The key the provider reads its `providerOptions` under: the first segment of its id, as the AI
 * SDK's own providers derive it (`anthropic.messages` → `anthropic`).
 */
export function providerKeyOf(provider: string): string {
  const dot = provider.indexOf('.');
  return dot === -1 ? provider : provider.slice(0, dot);
}

/**
 * One reins request as AI SDK call options (V4 shape). Settings with a standard place in the
 * specification go there (sampling, stop sequences, V4's `reasoning`); thinking budgets, cache
 * breakpoints and the parallel-tool switch go into the provider options of the providers reins
 * knows (Anthropic, OpenAI); for any other provider they are a `ConfigurationError` naming the
 * setting, and `settings.providerOptions` (passed verbatim, over what reins mapped) is the way.
 */
export function aiSdkCallOptions(
  model: AiSdkModelIdentity,
  request: ModelRequest,
  settings: ModelSettings,
): LanguageModelV4CallOptions {
  const providerKey = providerKeyOf(model.provider);
  const { prompt, origins } = toAiSdkPrompt(request.system, request.messages, providerKey);
  const call: LanguageModelV4CallOptions = { prompt };
  if (request.maxOutputTokens !== undefined) call.maxOutputTokens = request.maxOutputTokens;
  if (settings.temperature !== undefined) call.temperature = settings.temperature;
  if (settings.topP !== undefined) call.topP = settings.topP;
  if (settings.stopSequences !== undefined) call.stopSequences = [...settings.stopSequences];
  if (request.signal) call.abortSignal = request.signal;
  let tools: LanguageModelV4FunctionTool[] | undefined;
  if (request.tools.length > 0) {
    tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }));
    call.tools = tools;
    call.toolChoice = toolChoiceOf(request.toolChoice);
  }

  const mapped: SharedV4ProviderOptions = {};
  const set = (fields: JSONObject) => {
    mapped[providerKey] = { ...mapped[providerKey], ...fields };
  };
  const family = familyOf(providerKey);
  const unmapped = (option: string, what: string) =>
    new ConfigurationError(
      option,
      `${what} has no mapping for the AI SDK provider "${model.provider}"; leave it unset and put the provider's own fields in settings.providerOptions.${providerKey}`,
    );

  const thinking = settings.thinking;
  if (thinking === false) {
    if (model.specificationVersion === 'v4') call.reasoning = 'none';
    else if (family === 'anthropic') set({ thinking: { type: 'disabled' } });
  } else if (thinking !== undefined) {
    if (thinking.budgetTokens !== undefined) {
      if (family !== 'anthropic') throw unmapped('settings.thinking.budgetTokens', 'A thinking budget');
      checkAnthropicBudget(thinking.budgetTokens, request.maxOutputTokens);
      set({ thinking: { type: 'enabled', budgetTokens: thinking.budgetTokens } });
    }
    if (thinking.effort !== undefined) {
      if (model.specificationVersion === 'v4') call.reasoning = thinking.effort;
      else if (family === 'openai') set({ reasoningEffort: thinking.effort });
      else throw unmapped('settings.thinking.effort', 'A reasoning effort (before LanguageModelV4)');
    }
  }

  if (settings.parallelToolCalls !== undefined) {
    if (family === 'anthropic') set({ disableParallelToolUse: !settings.parallelToolCalls });
    else if (family === 'openai') set({ parallelToolCalls: settings.parallelToolCalls });
    else throw unmapped('settings.parallelToolCalls', 'The parallel-tool-calls switch');
  }

  const cache = settings.cache;
  if (cache !== undefined && cache !== false) {
    if (family === 'anthropic') {
      if (cache.key !== undefined)
        throw new ConfigurationError('settings.cache.key', 'Anthropic has no prompt cache key');
      placeAnthropicBreakpoints(cache, {
        prompt,
        origins,
        tools,
        messageCount: request.messages.length,
        providerKey,
      });
    } else if (family === 'openai') {
      // OpenAI caches every long prefix itself: breakpoints have nothing to mark; the key routes.
      if (cache.ttl !== undefined)
        throw new ConfigurationError('settings.cache.ttl', 'OpenAI has no 5m/1h cache lifetime');
      if (cache.key !== undefined) set({ promptCacheKey: cache.key });
    } else throw unmapped('settings.cache', 'Prompt caching');
  }

  const providerOptions = mergeProviderOptions(mapped, settings.providerOptions);
  if (Object.keys(providerOptions).length > 0) call.providerOptions = providerOptions;
  return call;
}

/**
 * The native Anthropic adapter's limits on a thinking budget, so a setting means the same on both
 * paths: a whole number of at least 1,024 (the API's minimum), under `maxOutputTokens` when the
 * request sets one. (The AI SDK sends `max_tokens` as `maxOutputTokens` plus the budget.)
 */
function checkAnthropicBudget(budgetTokens: number, maxOutputTokens: number | undefined) {
  const fail = (message: string) => new ConfigurationError('settings.thinking.budgetTokens', message);
  if (!Number.isInteger(budgetTokens) || budgetTokens < 1_024)
    throw fail(`must be a whole number of at least 1,024, got ${budgetTokens}`);
  if (maxOutputTokens !== undefined && budgetTokens >= maxOutputTokens)
    throw fail(`must be less than maxOutputTokens (${maxOutputTokens})`);
}

function familyOf(providerKey: string): 'anthropic' | 'openai' | undefined {
  return providerKey === 'anthropic' || providerKey === 'openai' ? providerKey : undefined;
}

function toolChoiceOf(choice: ToolChoice): LanguageModelV4ToolChoice {
  return typeof choice === 'object' ? { type: 'tool', toolName: choice.name } : { type: choice };
}

/** `over` on `base`, provider by provider, field by field. */
function mergeProviderOptions(
  base: SharedV4ProviderOptions,
  over: ModelSettings['providerOptions'],
): SharedV4ProviderOptions {
  const merged: SharedV4ProviderOptions = { ...base };
  for (const [provider, fields] of Object.entries(over ?? {}))
    merged[provider] = { ...merged[provider], ...(fields as JSONObject) };
  return merged;
}
