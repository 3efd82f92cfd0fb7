import type { Redis } from 'ioredis';
import type { Admission, TenantLimits } from '../queue/tenant-limits.js';

export type { Admission, TenantLimits };

// One round trip decides a start: the tenant's running set (members expire with their lease, so a
// killed worker's slot frees itself) and a fixed-window start counter.
// KEYS: running zset, window counter. ARGV: runId, now, leaseMs, maxRunning, maxStarts, windowMs.
const admitScript = `
local now = tonumber(ARGV[2])
local maxRunning = tonumber(ARGV[4])
if maxRunning > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= maxRunning then
    return {0, 'concurrency', 0}
  end
end
local maxStarts = tonumber(ARGV[5])
if maxStarts > 0 then
  local count = redis.call('INCR', KEYS[2])
  if count == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
  if count > maxStarts then return {0, 'rate', redis.call('PTTL', KEYS[2])} end
end
if maxRunning > 0 then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1]) end
return {1, 'ok', 0}
`;

/**
 * Per-tenant concurrency and start rate in Redis. OSS BullMQ has no groups, so a worker asks this
 * before it runs a job and, when refused, moves the job back to delayed. A slot is a member of a
 * sorted set scored by its lease's end: the holder renews it while it runs, and a SIGKILLed
 * worker's slot lapses on its own.
 */
export class TenantLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #limits: TenantLimits;
  readonly #leaseMs: number;

  constructor(options: { redis: Redis; prefix: string; limits: TenantLimits; leaseMs: number }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
    this.#limits = options.limits;
    this.#leaseMs = options.leaseMs;
  }

  get active(): boolean {
    return this.#limits.maxRunning !== undefined || this.#limits.rate !== undefined;
  }

  #running(tenant: string): string {
    return `${this.#prefix}:tenant-running:${tenant}`;
  }

  async admit(tenant: string, runId: string, now: number): Promise<Admission> {
    const rate = this.#limits.rate;
    const reply = (await this.#redis.eval(
      admitScript,
      2,
      this.#running(tenant),
      `${this.#prefix}:tenant-starts:${tenant}`,
      runId,
      now,
      this.#leaseMs,
      this.#limits.maxRunning ?? 0,
      rate?.max ?? 0,
      rate?.windowMs ?? 0,
    )) as [number, string, number];
    if (reply[0] === 1) return { ok: true };
    return { ok: false, reason: reply[1] as 'concurrency' | 'rate', retryInMs: Math.max(0, reply[2]) };
  }

  /** Extends the run's slot; the worker calls it while the run goes on. */
  async renew(tenant: string, runId: string, now: number): Promise<void> {
    if (this.#limits.maxRunning === undefined) return;
    await this.#redis.zadd(this.#running(tenant), 'XX', now + this.#leaseMs, runId);
  }

  async release(tenant: string, runId: string): Promise<void> {
    if (this.#limits.maxRunning === undefined) return;
    await this.#redis.zrem(this.#running(tenant), runId);
  }
}
