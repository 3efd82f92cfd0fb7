import type { AssistantBlock, JsonValue, Message } from './content.js';

/**
 * Why the model stopped. Provider values map onto these (see docs/providers.md):
 * Anthropic `end_turn|tool_use|max_tokens|stop_sequence|refusal|pause_turn`, OpenAI `stop → end_turn`,
 * `tool_calls → tool_use`, `length → max_tokens`, `content_filter → refusal`.
 */
export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'pause_turn'
  | 'context_window_exceeded'
  /** The stream ended before the provider said it was done (a dropped connection). */
  | 'interrupted'
  | 'other';

/**
 * Tokens a call used, as the provider reports them.
 *
 * `inputTokens` counts only the uncached part of the prefill; the prefill the call actually sent is
 * `inputTokens + cacheReadTokens + cacheWriteTokens` (Anthropic's convention; the OpenAI adapter
 * subtracts `cached_tokens` from `prompt_tokens` to match).
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /**
   * Of `outputTokens`, those spent on reasoning (OpenAI `reasoning_tokens`, AI SDK
   * `reasoningTokens`); already counted in `outputTokens`, shown, never added again.
   */
  reasoningTokens?: number;
}

/** The prefill a call sent: uncached input plus cache reads and writes. */
export function prefillTokensOf(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** Prefill plus output: the tokens a call is billed for. */
export function billedTokensOf(usage: Usage): number {
  return prefillTokensOf(usage) + usage.outputTokens;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

export function addUsage(total: Usage, more: Usage): Usage {
  const sum: Usage = {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    cacheReadTokens: total.cacheReadTokens + more.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + more.cacheWriteTokens,
  };
  if (total.reasoningTokens !== undefined || more.reasoningTokens !== undefined)
    sum.reasoningTokens = (total.reasoningTokens ?? 0) + (more.reasoningTokens ?? 0);
  return sum;
}

/** A tool as the provider sees it: name, description and a JSON Schema for its input. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: { [key: string]: JsonValue };
}

/**
 * Which tools the model may or must call: `none` forbids tool calls, `required` demands one,
 * `{ name }` demands that tool. Adapters send the provider's equivalent.
 */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/**
 * Provider features for one call, mapped by each adapter onto its API (docs/providers.md has the
 * table); a setting the provider lacks is a labeled `ConfigurationError`, never silently dropped.
 * Set them on the adapter (defaults), per run (`runAgent({ modelSettings })`) or per step
 * (`prepareStep`); later layers override earlier ones field by field.
 */
export interface ModelSettings {
  /**
   * Extended thinking / reasoning. `budgetTokens` is Anthropic's thinking budget (and the AI SDK's);
   * `effort` is OpenAI's reasoning effort (and Anthropic's adaptive effort). `false` turns it off.
   */
  thinking?: false | { budgetTokens?: number; effort?: 'minimal' | 'low' | 'medium' | 'high' };
  /**
   * Prompt caching. Anthropic: breakpoints on the stable prefix, system and tools by default, plus
   * the last message when `messages` is `'last'` (a rolling breakpoint) or the messages at the given
   * indices. OpenAI caches prefixes itself; `key` becomes `prompt_cache_key`. `false` turns it off.
   */
  cache?:
    | false
    | {
        system?: boolean;
        tools?: boolean;
        messages?: 'none' | 'last' | readonly number[];
        ttl?: '5m' | '1h';
        key?: string;
      };
  /** May the model ask for several tool calls in one turn. Provider default when unset. */
  parallelToolCalls?: boolean;
  stopSequences?: readonly string[];
  temperature?: number;
  topP?: number;
  /**
   * Raw request fields per provider, merged into the request body last (`{ anthropic: { ... },
   * openai: { ... } }`): for what reins does not map yet. Keys other than the adapter's are ignored.
   */
  providerOptions?: { readonly [provider: string]: { readonly [field: string]: JsonValue } };
}

/** One model call. */
export interface ModelRequest {
  system: string;
  messages: readonly Message[];
  /** Tools the model may call. Empty when tools are disabled (the final-answer step). */
  tools: readonly ToolDefinition[];
  toolChoice: ToolChoice;
  maxOutputTokens?: number;
  /** Provider features for this call; the adapter's own defaults apply beneath them. */
  settings?: ModelSettings;
  signal?: AbortSignal;
}

/** Settings layered: each field of `over` replaces the same field of `base`. */
export function mergeSettings(
  base: ModelSettings | undefined,
  over: ModelSettings | undefined,
): ModelSettings {
  if (!base) return over ?? {};
  if (!over) return base;
  const merged: ModelSettings = { ...base, ...over };
  if (base.providerOptions && over.providerOptions) {
    const providers: { [provider: string]: { readonly [field: string]: JsonValue } } = {
      ...base.providerOptions,
    };
    for (const [name, fields] of Object.entries(over.providerOptions))
      providers[name] = { ...providers[name], ...fields };
    merged.providerOptions = providers;
  }
  return merged;
}

/** What one model call returned. */
export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: StopReason;
  /**
   * What the provider reported. Absent when it reported nothing (an OpenAI-compatible server that
   * ignores `include_usage`): the loop then bills its own estimate (`usageEstimated` in the trace)
   * rather than zero, so the budgets keep working.
   */
  usage?: Usage;
  /** The provider's model id, used to pick a price. */
  model?: string;
  /** The provider's response id, kept in the trace. */
  id?: string;
  /**
   * How many tokens the conversation holds after this call, when that is not prefill plus output:
   * a turn with server-side iterations (web search, compaction, an advisor) reports usage summed
   * over them, but the next call's prefill is only the last iteration's. The context budget reads
   * this when present.
   */
  contextTokens?: number;
  /**
   * Tokens the same call billed at another model's price (an advisor model consulted, a fallback
   * model that answered), beside `usage`. The loop adds and prices each by its own model.
   */
  additionalUsage?: { model: string; usage: Usage }[];
}

/**
 * The provider-neutral model interface the loop calls. Adapters for the Anthropic and OpenAI SDKs
 * implement it; `scriptedModel` from `reins/testing` implements it for tests.
 */
export interface Model {
  /** Shown in traces. */
  readonly name: string;
  generate(request: ModelRequest): Promise<ModelResponse>;
}
