/**
 * Token estimators that use a provider's real tokenizer where one is public (OpenAI's, through
 * gpt-tokenizer, an optional peer dependency) and say how far off they are where none is (Claude).
 * docs/token-counting.md has the measured table.
 */
export * from './anthropic-token-estimator.js';
export * from './openai-chat-framing.js';
export * from './openai-function-definitions.js';
export * from './openai-token-estimator.js';
export * from './token-estimator-for-model.js';
