import cl100kBase from 'gpt-tokenizer/encoding/cl100k_base';
import o200kBase from 'gpt-tokenizer/encoding/o200k_base';
import { ConfigurationError } from '../errors/reins-error.js';
import type { TokenEstimator } from '../tokens/token-estimator.js';
import { chatFramingTokens, chatMessageTokens, chatToolsTokens } from './openai-chat-framing.js';

/** The BPE encodings OpenAI's current chat models use. */
export type OpenAIEncoding = 'o200k_base' | 'cl100k_base';

export interface OpenAITokenEstimatorOptions {
  /**
   * `o200k_base` for GPT-4o, GPT-4.1, GPT-5, the o-series and gpt-oss; `cl100k_base` for GPT-4
   * and GPT-3.5 Turbo. {@link tokenEstimatorForModel} picks it from a model id.
   * @default 'o200k_base'
   */
  encoding?: OpenAIEncoding;
}

const encodings = { o200k_base: o200kBase, cl100k_base: cl100kBase } as const;

// Text that spells a special token (`<|endoftext|>`) is plain text to the API: count it as such
// instead of throwing, as gpt-tokenizer does by default.
const asPlainText = { disallowedSpecial: new Set<string>() };

/**
 * OpenAI's tokenizer (gpt-tokenizer, ranks bundled, no network), with the Chat Completions framing
 * around messages, tools and the request (`openAIChatFramingTokens`). Text counts are exact; whole
 * requests are exact where the framing was measured (docs/token-counting.md has the table).
 *
 * @example
 * import { openaiTokenEstimator } from 'reins/tokenizers';
 *
 * const estimator = openaiTokenEstimator({ encoding: 'o200k_base' });
 * estimator.countText('hello world'); // 2
 * // then: runAgent({ model, input, tools, estimator })
 */
export function openaiTokenEstimator(options: OpenAITokenEstimatorOptions = {}): TokenEstimator {
  const encoding = options.encoding ?? 'o200k_base';
  if (!Object.hasOwn(encodings, encoding))
    throw new ConfigurationError('encoding', `must be one of ${Object.keys(encodings).join(', ')}`);
  const tokenizer = encodings[encoding];
  const estimator: TokenEstimator = {
    name: `openai-chat/${encoding}`,
    countText: (text) => (text === '' ? 0 : tokenizer.countTokens(text, asPlainText)),
    countMessage: (message) => chatMessageTokens(estimator, message),
    countTools: (tools) => chatToolsTokens(estimator, tools),
    countFraming: (request) => chatFramingTokens(estimator, request),
  };
  return estimator;
}
