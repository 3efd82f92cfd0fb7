/**
 * The Claude 2 tokenizer (`@anthropic-ai/tokenizer`, a dev dependency only) as an estimator, to
 * measure how far it is from Claude 3+ counts. reins does not ship it: Anthropic says it is no longer
 * accurate for Claude 3 and later. One tokenizer is built and reused; the package's own
 * `countTokens` builds a WebAssembly tokenizer per call (~65 ms per KB here).
 */
import { getTokenizer } from '@anthropic-ai/tokenizer';
import type { TokenEstimator } from '../../src/tokens/token-estimator.js';

let tokenizer: ReturnType<typeof getTokenizer> | undefined;

export const legacyClaudeTokenEstimator: TokenEstimator = {
  name: 'claude-2-legacy-bpe',
  // As the package counts: NFKC first, special tokens allowed.
  countText: (text) => {
    tokenizer ??= getTokenizer();
    return tokenizer.encode(text.normalize('NFKC'), 'all').length;
  },
};
