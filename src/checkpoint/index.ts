export * from './checkpoint-delta.js';
export * from './checkpoint-log.js';
export * from './checkpoint-store.js';
