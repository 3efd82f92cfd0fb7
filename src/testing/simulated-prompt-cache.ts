import { cyrb53 } from '../controls/text-hash.js';
import type { Message } from '../model/content.js';
import type { ModelRequest, Usage } from '../model/model.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';

/**
 * Where a simulated request carries cache breakpoints.
 *
 * - `'stable-prefix'`: one, at the end of the stable prefix: the system prompt, the tool
 *   definitions and the first message when it is the user's (the task), as
 *   `cache: { system, tools, messages: [0] }` asks of the Anthropic adapter. The bill cross-post's
 *   model: the transcript is never cached.
 * - `'rolling'`: that one, and another on the last message (`messages: 'last'`), so a request reads
 *   the previous one's whole prefix when nothing before its end changed.
 */
export type CacheBreakpoints = 'stable-prefix' | 'rolling';

export interface SimulatedPromptCacheOptions {
  /** @default 'stable-prefix' */
  breakpoints?: CacheBreakpoints;
  /** Sizes the request the way the scripted model does. @default approxTokenEstimator */
  estimator?: TokenEstimator;
}

/** The prefill of one request split the way a provider bills it. */
export type CachedPrefill = Pick<Usage, 'inputTokens' | 'cacheReadTokens' | 'cacheWriteTokens'>;

/** A provider's prompt cache, simulated: see {@link simulatedPromptCache}. */
export interface SimulatedPromptCache {
  /** Bills one request and writes its breakpoint prefixes into the cache. */
  bill(request: Pick<ModelRequest, 'system' | 'tools' | 'messages'>): CachedPrefill;
  /** Prefixes held. */
  readonly size: number;
}

/**
 * A deterministic stand-in for a provider's prompt cache (Anthropic's rules, simplified), for a
 * scripted model to report `cacheReadTokens` and `cacheWriteTokens` as a provider would. Its rules:
 *
 * 1. A request is its system prompt and tools (one segment), then its messages in order; each
 *    segment's tokens are counted with the estimator, as the scripted model counts them.
 * 2. Breakpoints sit where {@link CacheBreakpoints} says. A prefix ending at a breakpoint is
 *    identified by its content (a hash chain over the segments' JSON), not by object identity.
 * 3. The cache holds every breakpoint prefix an earlier request wrote; nothing expires (a scripted
 *    run's calls are far less than a 5-minute TTL apart) and there is no minimum length.
 * 4. `cacheReadTokens`: the tokens of the longest prefix, ending at or before this request's last
 *    breakpoint, that the cache holds (the provider looks back from a breakpoint for an earlier
 *    request's; Anthropic's 20-block limit on that look-back is left out). `cacheWriteTokens`: from
 *    there to the last breakpoint; every breakpoint prefix of the request is then held.
 *    `inputTokens`: what follows the last breakpoint, billed as plain input.
 *
 * With `'stable-prefix'` this is the bill cross-post's model exactly: the first call writes the
 * stable prefix (1.25× input price), every later call reads it (0.1×) and pays full price for the
 * transcript after it. Any edit before a breakpoint makes the next request miss from there on.
 *
 * @example
 * const cache = simulatedPromptCache({ breakpoints: 'rolling' });
 * const model = scriptedModel([(request) => ({ text: 'done', usage: cache.bill(request) })]);
 */
export function simulatedPromptCache(options: SimulatedPromptCacheOptions = {}): SimulatedPromptCache {
  const rolling = (options.breakpoints ?? 'stable-prefix') === 'rolling';
  const counter = new PrefillCounter(options.estimator ?? approxTokenEstimator);
  const held = new Set<string>();
  const segmentHash = new WeakMap<Message, string>();
  const hashOf = (message: Message): string => {
    let hash = segmentHash.get(message);
    if (hash === undefined) {
      hash = cyrb53(JSON.stringify(message));
      segmentHash.set(message, hash);
    }
    return hash;
  };
  // The previous request's segments and chain, so a request that extends it hashes only its new part.
  let previousSegments: string[] = [];
  let previousChain: string[] = [];

  return {
    get size() {
      return held.size;
    },
    bill(request) {
      const messages = request.messages;
      const head = cyrb53(`${request.system}\u0000${JSON.stringify(request.tools)}`);
      const segments = [head];
      const tokens = [counter.system(request.system) + counter.tools(request.tools)];
      for (const message of messages) {
        segments.push(hashOf(message));
        tokens.push(counter.message(message));
      }
      // chain[i] names the prefix of segments 0..i.
      const chain: string[] = new Array(segments.length);
      let same = 0;
      while (
        same < segments.length &&
        same < previousSegments.length &&
        segments[same] === previousSegments[same]
      ) {
        chain[same] = previousChain[same] as string;
        same++;
      }
      for (let i = same; i < segments.length; i++)
        chain[i] = cyrb53(`${i === 0 ? '' : chain[i - 1]}:${segments[i]}`);
      previousSegments = segments;
      previousChain = chain;

      // The stable prefix ends after the first message when it is the user's (the task).
      const stableEnd = messages[0]?.role === 'user' ? 1 : 0;
      const breakpoints = [stableEnd];
      if (rolling && segments.length - 1 > stableEnd) breakpoints.push(segments.length - 1);

      const prefixTokens = (end: number) => {
        let sum = 0;
        for (let i = 0; i <= end; i++) sum += tokens[i] as number;
        return sum;
      };
      const lastBreakpoint = breakpoints[breakpoints.length - 1] as number;
      // The provider looks back from the breakpoint for the longest prefix it holds.
      let readEnd = lastBreakpoint;
      while (readEnd >= 0 && !held.has(chain[readEnd] as string)) readEnd--;
      for (const end of breakpoints) held.add(chain[end] as string);
      const read = readEnd < 0 ? 0 : prefixTokens(readEnd);
      const upToLast = prefixTokens(lastBreakpoint);
      const total = prefixTokens(segments.length - 1);
      return { cacheReadTokens: read, cacheWriteTokens: upToLast - read, inputTokens: total - upToLast };
    },
  };
}
