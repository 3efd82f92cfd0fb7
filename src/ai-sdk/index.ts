/**
 * `reins/ai-sdk`: the model interface over any AI SDK provider's language model
 * (`@ai-sdk/provider`'s specification, an optional peer read by type only).
 */
export * from './ai-sdk-call-options.js';
export * from './ai-sdk-model.js';
export * from './assemble-ai-sdk-stream.js';
export * from './block-provider.js';
export * from './to-ai-sdk-prompt.js';
export * from './to-v3-call-options.js';
