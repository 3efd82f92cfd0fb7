/** Node-only helpers: a JSONL trace file sink and reader. */
export * from './jsonl-trace-sink.js';
