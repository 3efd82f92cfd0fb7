/** SQLite-backed stores and the transcript index (better-sqlite3 12, an optional peer dependency). */
export * from './sqlite-checkpoint-store.js';
export * from './sqlite-dead-letter-store.js';
export * from './sqlite-eval-results-store.js';
export * from './sqlite-idempotency-store.js';
export * from './sqlite-stage-store.js';
export * from './sqlite-transcript-index.js';
