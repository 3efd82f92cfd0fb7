/** `reins/idempotency`: tools that are safe to retry. Stores: memory here; SQLite, PostgreSQL, Redis in their subpaths. */
export * from './idempotent.js';
export * from './memory-store.js';
export * from './store.js';
