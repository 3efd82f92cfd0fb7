/** `reins/openai`: the model interface over the official OpenAI SDK (an optional peer). */
export * from './openai-model.js';
export * from './responses-model.js';
