/**
 * `reins/context`: the context window run as a cache. The policy (`contextPolicy`), the window it
 * edits over the append-only transcript, the summarizers, and what a long run keeps outside its
 * window: the transcript index (append-only, lexical, queried every step) and its memory
 * implementation; `sqliteTranscriptIndex` is in `reins/sqlite`.
 */
export * from './cache-policy.js';
export * from './context-edit.js';
export * from './context-policy.js';
export * from './context-window.js';
export * from './memory-transcript-index.js';
export * from './model-summarizer.js';
export * from './recall-tool.js';
export * from './step-entries.js';
export * from './structured-digest.js';
export * from './transcript-index.js';
export * from './transcript-terms.js';
