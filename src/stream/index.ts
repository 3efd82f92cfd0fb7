/** `reins/stream`: streamed tool-call arguments, shown as they arrive and executed only when whole. */

export * from './assemble-anthropic.js';
export * from './assemble-openai.js';
export * from './assemble-responses.js';
export * from './parse-partial-json.js';
export * from './stream-error.js';
