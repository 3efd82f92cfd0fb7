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
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    cacheReadTokens: total.cacheReadTokens + more.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + more.cacheWriteTokens,
  };
}

/** A tool as the provider sees it: name, description and a JSON Schema for its input. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: { [key: string]: JsonValue };
}

/** One model call. */
export interface ModelRequest {
  system: string;
  messages: readonly Message[];
  /** Tools the model may call. Empty when tools are disabled (the final-answer step). */
  tools: readonly ToolDefinition[];
  /** `none` forbids tool calls for this request; adapters send the provider's equivalent. */
  toolChoice: 'auto' | 'none';
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

/** What one model call returned. */
export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: Usage;
  /** The provider's model id, used to pick a price. */
  model?: string;
  /** The provider's response id, kept in the trace. */
  id?: string;
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
