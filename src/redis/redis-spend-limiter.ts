import type { Redis } from 'ioredis';
import type { SpendLimiter } from '../resilience/spend-limiter.js';
import { type Clock, systemClock } from '../time/clock.js';

/** Account spend in Redis, per fixed window, shared by every process of the fleet. */
export class RedisSpendLimiter implements SpendLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #windowMs: number;
  readonly #clock: Clock;

  constructor(options: { redis: Redis; key: string; windowMs?: number; clock?: Clock }) {
    this.#redis = options.redis;
    this.#prefix = options.key;
    this.#windowMs = options.windowMs ?? 3_600_000;
    this.#clock = options.clock ?? systemClock;
  }

  async spent(accountId: string): Promise<number> {
    return Number((await this.#redis.get(this.#key(accountId))) ?? 0);
  }

  async add(accountId: string, usd: number): Promise<number> {
    const key = this.#key(accountId);
    const [[, total]] = (await this.#redis
      .multi()
      .incrbyfloat(key, usd)
      .pexpire(key, this.#windowMs * 2)
      .exec()) as [[unknown, string]];
    return Number(total);
  }

  #key(accountId: string): string {
    return `${this.#prefix}:${accountId}:${Math.floor(this.#clock.now() / this.#windowMs)}`;
  }
}
