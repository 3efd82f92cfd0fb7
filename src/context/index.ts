export * from './cache-policy.js';
export * from './context-edit.js';
export * from './context-policy.js';
export * from './context-window.js';
export * from './recall-tool.js';
export * from './step-entries.js';
export * from './structured-digest.js';
export * from './transcript-index.js';
