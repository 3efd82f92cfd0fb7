/**
 * `reins/bullmq`: agents behind a BullMQ queue on Redis. {@link BullmqRunQueue} enqueues runs,
 * cancels them and resumes paused ones; {@link createRunWorker} executes them on any number of
 * worker processes; the run records and traces live in Redis ({@link RedisRunRegistry},
 * {@link RedisRunEventLog}). Needs the optional peers `bullmq` and `ioredis`.
 */
export * from './bullmq-run-queue.js';
export * from './redis-connection.js';
export * from './redis-run-event-log.js';
export * from './redis-run-registry.js';
export * from './run-worker.js';
export * from './tenant-limiter.js';
