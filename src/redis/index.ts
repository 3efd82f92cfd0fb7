/**
 * `reins/redis`: fleet-shared run checkpoints, retry budget, circuit breaker, dead letters and spend
 * ceiling (ioredis).
 */
export * from './redis-checkpoint-store.js';
export * from './redis-circuit-breaker.js';
export * from './redis-dead-letter-store.js';
export * from './redis-idempotency-store.js';
export * from './redis-retry-budget.js';
export * from './redis-spend-limiter.js';
