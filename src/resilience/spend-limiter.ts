import { type Clock, systemClock } from '../time/clock.js';

/**
 * Spend per account over a rolling window, shared by every run of the account (in-process here,
 * through Redis in `reins/redis`). The loop checks it before every model call.
 */
export interface SpendLimiter {
  /** USD spent by the account in the current window. */
  spent(accountId: string): number | Promise<number>;
  /** Adds a call's cost; returns the new total. */
  add(accountId: string, usd: number): number | Promise<number>;
}

/**
 * An in-process spend ledger in fixed windows (`windowMs`, default one hour): evaluated on every
 * call, not once a day.
 */
export class MemorySpendLimiter implements SpendLimiter {
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #spent = new Map<string, { window: number; usd: number }>();

  constructor(options: { windowMs?: number; clock?: Clock } = {}) {
    this.#windowMs = options.windowMs ?? 3_600_000;
    this.#clock = options.clock ?? systemClock;
  }

  spent(accountId: string): number {
    const window = Math.floor(this.#clock.now() / this.#windowMs);
    const entry = this.#spent.get(accountId);
    return entry && entry.window === window ? entry.usd : 0;
  }

  add(accountId: string, usd: number): number {
    const total = this.spent(accountId) + usd;
    this.#spent.set(accountId, { window: Math.floor(this.#clock.now() / this.#windowMs), usd: total });
    return total;
  }
}
