import { ConfigurationError } from '../errors/reins-error.js';
import { type Clock, systemClock } from '../time/clock.js';

/** The kinds of failure a retry is spent on. */
export type RetryKind = 'transient' | 'throttled';

/** A budget's answer to one request to retry. */
export interface RetryGrant {
  granted: boolean;
  /** Tokens the retry cost (0 when denied). */
  cost: number;
  /** Tokens left after the decision. */
  tokens: number;
}

/** Counts kept for auditing a budget: retries granted must stay within what it was funded. */
export interface RetryBudgetStats {
  granted: number;
  denied: number;
  successes: number;
  createdAtMs: number;
}

/**
 * A retry budget shared by everything that retries: a token bucket funded by successes. In-process
 * (`TokenBucketRetryBudget`) and Redis-backed (`reins/redis`) implementations pass one conformance
 * suite.
 */
export interface RetryBudget {
  /** Asks to spend a retry. A denial means: fail now. */
  withdraw(kind: RetryKind): RetryGrant | Promise<RetryGrant>;
  /** A call succeeded; pass the grant of the retry that led to it, if any. */
  deposit(retried?: RetryGrant): void | Promise<void>;
  stats(): RetryBudgetStats | Promise<RetryBudgetStats>;
}

export interface RetryBudgetOptions {
  /** Tokens credited per success (0.1: retries may be a tenth of successes). @default 0.1 */
  ratio?: number;
  /** Ambient refill, tokens per second, so a quiet service can still retry. @default 1 */
  minPerSecond?: number;
  /** The most tokens the bucket holds; it starts full. @default 10 */
  capacity?: number;
  /** Tokens one retry costs, by kind. @default { transient: 1, throttled: 1 } */
  retryCost?: Partial<Record<RetryKind, number>>;
  /**
   * A success after a retry refunds that retry's cost instead of crediting `ratio` (AWS standard
   * retry mode). @default false
   */
  refundOnSuccess?: boolean;
  /** @default systemClock */
  clock?: Clock;
}

/** The resolved parameters, shared with the Redis implementation so both compute the same thing. */
export interface ResolvedBudget {
  ratio: number;
  minPerSecond: number;
  capacity: number;
  transientCost: number;
  throttledCost: number;
  refundOnSuccess: boolean;
}

export function resolveBudget(options: RetryBudgetOptions): ResolvedBudget {
  const resolved = {
    ratio: options.ratio ?? 0.1,
    minPerSecond: options.minPerSecond ?? 1,
    capacity: options.capacity ?? 10,
    transientCost: options.retryCost?.transient ?? 1,
    throttledCost: options.retryCost?.throttled ?? 1,
    refundOnSuccess: options.refundOnSuccess ?? false,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (typeof value === 'number' && !(Number.isFinite(value) && value >= 0))
      throw new ConfigurationError(`retryBudget.${name}`, `must be a finite number ≥ 0, got ${value}`);
  }
  if (resolved.capacity <= 0) throw new ConfigurationError('retryBudget.capacity', 'must be > 0');
  return resolved;
}

/**
 * The in-process retry budget. Tokens stay within [0, capacity] at every step (grpc-js once kept
 * them pinned at zero by swapping its clamps; both bounds are tested).
 *
 * @example
 * const budget = new TokenBucketRetryBudget({ ratio: 0.2, minPerSecond: 10, capacity: 100 });
 * if (budget.withdraw('transient').granted) { ... retry ... }
 */
export class TokenBucketRetryBudget implements RetryBudget {
  readonly #params: ResolvedBudget;
  readonly #clock: Clock;
  #tokens: number;
  #updatedAt: number;
  readonly #stats: RetryBudgetStats;

  constructor(options: RetryBudgetOptions = {}) {
    this.#params = resolveBudget(options);
    this.#clock = options.clock ?? systemClock;
    this.#tokens = this.#params.capacity;
    this.#updatedAt = this.#clock.now();
    this.#stats = { granted: 0, denied: 0, successes: 0, createdAtMs: this.#updatedAt };
  }

  /** Tokens now, after the ambient refill. */
  get tokens(): number {
    this.#refill();
    return this.#tokens;
  }

  withdraw(kind: RetryKind): RetryGrant {
    this.#refill();
    const cost = kind === 'throttled' ? this.#params.throttledCost : this.#params.transientCost;
    if (this.#tokens >= cost) {
      this.#tokens = Math.max(0, this.#tokens - cost);
      this.#stats.granted++;
      return { granted: true, cost, tokens: this.#tokens };
    }
    this.#stats.denied++;
    return { granted: false, cost: 0, tokens: this.#tokens };
  }

  deposit(retried?: RetryGrant): void {
    this.#refill();
    this.#stats.successes++;
    const credit = this.#params.refundOnSuccess && retried?.granted ? retried.cost : this.#params.ratio;
    this.#tokens = Math.min(this.#params.capacity, this.#tokens + credit);
  }

  stats(): RetryBudgetStats {
    return { ...this.#stats };
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#updatedAt;
    // A clock that steps back refills nothing and is not remembered, so it cannot bank tokens.
    if (elapsed > 0) {
      this.#tokens = Math.min(
        this.#params.capacity,
        this.#tokens + (this.#params.minPerSecond * elapsed) / 1_000,
      );
      this.#updatedAt = now;
    }
  }
}

/**
 * AWS SDK standard retry quota: 500 tokens, a transient retry costs 14, a throttling retry 5, a
 * success after a retry refunds its cost, a first-try success adds 1, no time refill.
 */
export function awsRetryQuota(options: { clock?: Clock } = {}): TokenBucketRetryBudget {
  return new TokenBucketRetryBudget({
    capacity: 500,
    ratio: 1,
    minPerSecond: 0,
    retryCost: { transient: 14, throttled: 5 },
    refundOnSuccess: true,
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/** Retries granted beyond what the budget was funded: `ratio·successes + minPerSecond·elapsed + capacity`. */
export function budgetViolations(
  stats: RetryBudgetStats,
  options: RetryBudgetOptions,
  nowMs: number,
): number {
  const params = resolveBudget(options);
  const cost = Math.min(params.transientCost, params.throttledCost) || 1;
  const funded =
    (params.ratio * stats.successes +
      (params.minPerSecond * (nowMs - stats.createdAtMs)) / 1_000 +
      params.capacity) /
    cost;
  return Math.max(0, Math.ceil(stats.granted - funded - 1e-9));
}
