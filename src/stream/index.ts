/** `reins/stream`: streamed tool-call arguments, shown as they arrive and executed only when whole. */
export * from './parse-partial-json.js';
