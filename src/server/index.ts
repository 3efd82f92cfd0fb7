/**
 * `reins/server`: queued runs over HTTP (Hono) — start, list, read, follow a run's trace as
 * Server-Sent Events, approve, cancel — and the run viewer page. Needs the optional peers `hono`
 * (and `@hono/node-server` to listen on Node).
 */
export * from './authenticate.js';
export * from './last-event-id.js';
export * from './listen.js';
export * from './recorded-runs.js';
export * from './run-service.js';
export * from './run-service-error.js';
export * from './viewer-assets.js';
export * from './viewer-directory.js';
