import { approxTokenEstimator, type TokenEstimator } from '../tokens/token-estimator.js';
import { anthropicTokenEstimator } from './anthropic-token-estimator.js';
import { type OpenAIEncoding, openaiTokenEstimator } from './openai-token-estimator.js';

/**
 * Model id prefixes and their encodings, in the order tiktoken's `MODEL_PREFIX_TO_ENCODING` checks
 * them (tiktoken/model.py), so `gpt-4o-mini` is o200k before `gpt-4` claims it. gpt-oss uses
 * o200k_harmony, whose ranks are o200k_base's: its text counts are the same, its chat framing is not.
 */
const openAIPrefixes: readonly (readonly [string, OpenAIEncoding])[] = [
  ['o1', 'o200k_base'],
  ['o3', 'o200k_base'],
  ['o4-mini', 'o200k_base'],
  ['gpt-5', 'o200k_base'],
  ['gpt-4.5', 'o200k_base'],
  ['gpt-4.1', 'o200k_base'],
  ['chatgpt-4o', 'o200k_base'],
  ['gpt-4o', 'o200k_base'],
  ['gpt-oss', 'o200k_base'],
  ['ft:gpt-4o', 'o200k_base'],
  ['gpt-4', 'cl100k_base'],
  ['gpt-3.5', 'cl100k_base'],
  ['gpt-35-turbo', 'cl100k_base'],
  ['ft:gpt-4', 'cl100k_base'],
  ['ft:gpt-3.5-turbo', 'cl100k_base'],
];

const byEncoding = new Map<OpenAIEncoding, TokenEstimator>();

/** The OpenAI encoding a model id uses, or undefined when the id names no OpenAI chat model. */
export function openAIEncodingForModel(modelId: string): OpenAIEncoding | undefined {
  const id = modelId.slice(modelId.lastIndexOf('/') + 1).toLowerCase();
  return openAIPrefixes.find(([prefix]) => id.startsWith(prefix))?.[1];
}

/**
 * The best estimator reins has for a model id: OpenAI's tokenizer for OpenAI models (by id
 * prefix, as tiktoken maps them), {@link anthropicTokenEstimator} for Claude (Anthropic API,
 * Bedrock and Vertex ids alike), and the four-characters default for anything else. A gateway
 * prefix (`openai/gpt-4o`) is ignored. Check `name` to see which one you got.
 *
 * @example
 * import { tokenEstimatorForModel } from 'reins/tokenizers';
 *
 * tokenEstimatorForModel('gpt-4o-mini').name; // 'openai-chat/o200k_base'
 * tokenEstimatorForModel('claude-sonnet-4-5').name; // 'anthropic-approx(toolPrompt=520,toolBlock=36)'
 * tokenEstimatorForModel('llama-3.1-70b').name; // 'chars/4'
 */
export function tokenEstimatorForModel(modelId: string): TokenEstimator {
  const encoding = openAIEncodingForModel(modelId);
  if (encoding) {
    const known = byEncoding.get(encoding);
    if (known) return known;
    const estimator = openaiTokenEstimator({ encoding });
    byEncoding.set(encoding, estimator);
    return estimator;
  }
  if (/claude/i.test(modelId)) return anthropicTokenEstimator();
  return approxTokenEstimator;
}
