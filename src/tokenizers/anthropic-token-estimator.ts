import { ConfigurationError } from '../errors/reins-error.js';
import type { Message } from '../model/content.js';
import { approxTokenEstimator, countBlockDefault, type TokenEstimator } from '../tokens/token-estimator.js';

export interface AnthropicTokenEstimatorOptions {
  /**
   * The system prompt Anthropic adds to every request that sends tools. Its docs list 159–530
   * tokens for the Claude 3 models; recorded requests put it near 340 for Claude Sonnet 4 and 510
   * for Claude Sonnet 4.5 (docs/token-counting.md). The default covers both.
   * @default 520
   */
  toolUseSystemPromptTokens?: number;
  /**
   * What each `tool_use` and `tool_result` block costs beyond its name, input and content: its id
   * (random, so it tokenizes poorly) and its wrapper. Recorded Claude Sonnet 4 requests put a call
   * and its result at up to ~72 tokens beyond their text.
   * @default 36
   */
  toolBlockTokens?: number;
}

const checkedCount = (option: string, value: number | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) throw new ConfigurationError(option, 'must be an integer ≥ 0');
  return value;
};

/**
 * An estimate for Claude 3 and later, whose tokenizer is not public (the legacy one in
 * `@anthropic-ai/tokenizer` is Claude 2's and undercounts them): the four-characters rule for text,
 * which over-counts English prose on Claude Sonnet 4.5 by ~17%, plus the framing the rule misses —
 * the tool-use system prompt and each tool call's id and wrapper — sized so that no recorded
 * request is undercounted. An approximation tuned on ten recorded requests, not a tokenizer: the
 * truth is Anthropic's `count_tokens` endpoint, and the reported usage after each call.
 *
 * @example
 * import { anthropicTokenEstimator } from 'reins/tokenizers';
 *
 * const estimator = anthropicTokenEstimator({ toolUseSystemPromptTokens: 346 });
 * estimator.countText('hello world'); // 3
 */
export function anthropicTokenEstimator(options: AnthropicTokenEstimatorOptions = {}): TokenEstimator {
  const toolPrompt = checkedCount('toolUseSystemPromptTokens', options.toolUseSystemPromptTokens, 520);
  const perToolBlock = checkedCount('toolBlockTokens', options.toolBlockTokens, 36);
  const estimator: TokenEstimator = {
    name: `anthropic-approx(toolPrompt=${toolPrompt},toolBlock=${perToolBlock})`,
    countText: approxTokenEstimator.countText,
    countMessage: (message: Message) => {
      let tokens = 0;
      for (const block of message.content) {
        tokens += countBlockDefault(estimator, block);
        if (block.type === 'tool_use' || block.type === 'tool_result') tokens += perToolBlock;
      }
      return tokens;
    },
    countFraming: ({ tools }) => (tools.length > 0 ? toolPrompt : 0),
  };
  return estimator;
}
