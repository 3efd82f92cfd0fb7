import type { RetryBudgetOptions } from '../resilience/retry-budget.js';

/** What the fleet benchmark tells each worker process. */
export interface WorkerConfig {
  mode: 'naive' | 'reins';
  redisUrl: string;
  prefix: string;
  serviceUrl: string;
  seed: number;
  /** Items a worker handles at once. */
  concurrency: number;
  naive: { toolRetries: number; agentRetries: number; jobRetries: number; baseMs: number };
  reins: {
    maxAttempts: number;
    /** HTTP attempts an item may take across re-queues before it is dead-lettered. */
    maxTotalAttempts: number;
    backoff: 'exponential' | 'decorrelated';
    baseMs: number;
    capMs: number;
    breaker: boolean;
    breakerThreshold: number;
    cooldownMs: number;
    budget: boolean;
    budgetOptions: Pick<RetryBudgetOptions, 'ratio' | 'minPerSecond' | 'capacity'>;
  };
}
