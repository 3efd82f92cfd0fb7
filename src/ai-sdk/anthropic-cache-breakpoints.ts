import type {
  JSONObject,
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import { ConfigurationError } from '../errors/reins-error.js';
import type { ModelSettings } from '../model/model.js';

/** Caching that is on. */
type CacheSettings = Exclude<NonNullable<ModelSettings['cache']>, false>;

/** The Messages API allows four cache breakpoints per request; the AI SDK drops the fifth with a warning. */
const maxBreakpoints = 4;

export interface AnthropicBreakpointTargets {
  /** The AI SDK prompt, marked in place. */
  prompt: LanguageModelV4Prompt;
  /** `origins[i]`: the reins message `prompt[i]` came from; -1 for the system message. */
  origins: readonly number[];
  /** The tools sent, marked in place. */
  tools: LanguageModelV4FunctionTool[] | undefined;
  /** How many reins messages the request holds. */
  messageCount: number;
  providerKey: string;
}

/**
 * Anthropic cache breakpoints as AI SDK `cacheControl` provider options: on the system message,
 * the last tool, and the last AI SDK message each chosen reins message became. A breakpoint the
 * request cannot carry is a `ConfigurationError` naming `settings.cache.messages`, never dropped: an
 * index with no message, or more than four in all (the native adapter's rule). A chosen message that
 * sends nothing to this provider (only another provider's thinking) marks the message before it:
 * the prefix through either is the same.
 */
export function placeAnthropicBreakpoints(cache: CacheSettings, targets: AnthropicBreakpointTargets): void {
  const { prompt, origins, tools, messageCount, providerKey } = targets;
  const fail = (message: string): never => {
    throw new ConfigurationError('settings.cache.messages', message);
  };
  const breakpoint: SharedV4ProviderOptions = {
    [providerKey]: {
      cacheControl: { type: 'ephemeral', ...(cache.ttl ? { ttl: cache.ttl } : {}) } as JSONObject,
    },
  };
  const marks = new Set<{ providerOptions?: SharedV4ProviderOptions }>();
  const system = prompt[0];
  if ((cache.system ?? true) && system?.role === 'system') marks.add(system);
  const lastTool = tools?.[tools.length - 1];
  if ((cache.tools ?? true) && lastTool) marks.add(lastTool);
  const onPrefix = marks.size;

  const chosen =
    cache.messages === 'last'
      ? [messageCount - 1]
      : cache.messages === undefined || cache.messages === 'none'
        ? []
        : [...cache.messages];
  for (const index of chosen) {
    if (!Number.isInteger(index) || index < 0 || index >= messageCount)
      fail(`no message at index ${index} (there are ${messageCount})`);
    // The last AI SDK message that came from this reins message or an earlier one.
    let at = origins.length - 1;
    while (at >= 0 && (origins[at] as number) > index) at--;
    const target = prompt[at];
    if (target === undefined || origins[at] === -1)
      fail(
        `message ${index} and those before it send nothing to "${providerKey}"; there is no prefix to cache`,
      );
    else marks.add(target);
  }
  if (marks.size > maxBreakpoints)
    fail(`at most ${maxBreakpoints} cache breakpoints fit in a request, ${onPrefix} are on system and tools`);
  for (const mark of marks) mark.providerOptions = breakpoint;
}
