/** `reins/resilience`: classify, back off, budget, break, quarantine. No dependencies; browser-safe. */
export * from './backoff.js';
export * from './breaker-strategy.js';
export * from './circuit-breaker.js';
export * from './classify-error.js';
export * from './dead-letter.js';
export * from './retry.js';
export * from './retry-budget.js';
export * from './retrying-model.js';
export * from './sleep.js';
export * from './spend-limiter.js';
export * from './timeout-monitor.js';
