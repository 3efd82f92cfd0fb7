/** `reins/anthropic`: the model interface over the official Anthropic SDK (an optional peer). */
export * from './anthropic-model.js';
