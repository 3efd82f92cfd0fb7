export * from './compact-trace-encoder.js';
export * from './events.js';
export * from './parse-jsonl-trace.js';
export * from './render.js';
export * from './replay.js';
export * from './sink.js';
export * from './split-trace.js';
