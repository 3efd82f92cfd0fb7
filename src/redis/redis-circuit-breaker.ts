import type { Redis } from 'ioredis';
import { consecutiveFailures, failureRate } from '../resilience/breaker-strategy.js';
import { type Breaker, type BreakerPermit, CircuitBreaker } from '../resilience/circuit-breaker.js';
import { type Clock, systemClock } from '../time/clock.js';

const acquireScript = `
local now = tonumber(ARGV[1])
local cooldown = tonumber(ARGV[2])
local probeTtl = tonumber(ARGV[3])
local status = redis.call('HGET', KEYS[1], 'status')
if status == false or status == 'closed' then return {1, 0, 0} end
if status == 'open' then
  local openedAt = tonumber(redis.call('HGET', KEYS[1], 'openedAt') or now)
  if now - openedAt < cooldown then return {0, 0, cooldown - (now - openedAt)} end
end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', probeTtl) then
  redis.call('HSET', KEYS[1], 'status', 'half_open')
  return {1, 1, 0}
end
local ttl = redis.call('PTTL', KEYS[2])
if ttl < 0 then ttl = 0 end
return {0, 0, ttl}
`;

const recordScript = `
local now = tonumber(ARGV[1])
local ok = tonumber(ARGV[2])
local probe = tonumber(ARGV[3])
local kind = ARGV[4]
local threshold = tonumber(ARGV[5])
local windowMs = tonumber(ARGV[6])
local minimumCalls = tonumber(ARGV[7])
local function open(counter)
  redis.call('HSET', KEYS[1], 'status', 'open', 'openedAt', now, 'failures', 0, 'calls', 0, 'fails', 0, 'windowStart', now)
  redis.call('HINCRBY', KEYS[1], counter, 1)
end
if probe == 1 then
  redis.call('DEL', KEYS[2])
  if ok == 1 then
    redis.call('HSET', KEYS[1], 'status', 'closed', 'failures', 0, 'calls', 0, 'fails', 0, 'windowStart', now)
  else
    open('reopens')
  end
  return 1
end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= false and status ~= 'closed' then return 0 end
local tripped = false
if kind == 'consecutive' then
  if ok == 1 then
    redis.call('HSET', KEYS[1], 'failures', 0)
  else
    tripped = redis.call('HINCRBY', KEYS[1], 'failures', 1) >= threshold
  end
else
  local start = tonumber(redis.call('HGET', KEYS[1], 'windowStart') or now)
  if now - start >= windowMs then
    redis.call('HSET', KEYS[1], 'windowStart', now, 'calls', 0, 'fails', 0)
  end
  local calls = redis.call('HINCRBY', KEYS[1], 'calls', 1)
  local fails = tonumber(redis.call('HGET', KEYS[1], 'fails') or 0)
  if ok == 0 then fails = redis.call('HINCRBY', KEYS[1], 'fails', 1) end
  tripped = calls >= minimumCalls and fails / calls >= threshold
end
if tripped then open('opens') end
return 1
`;

export interface RedisCircuitBreakerOptions {
  redis: Redis;
  /** The dependency's key: every process naming it shares one breaker. */
  key: string;
  /** @default { type: 'consecutive', threshold: 5 } */
  strategy?:
    | { type: 'consecutive'; threshold: number }
    | { type: 'rate'; threshold: number; windowMs: number; minimumCalls: number };
  /** @default 30_000 */
  cooldownMs?: number;
  /** The half-open probe's exclusive lease; a probe that never reports frees it after this. @default cooldownMs */
  probeLeaseMs?: number;
  /** A Redis command slower than this counts as Redis being down. @default 500 */
  commandTimeoutMs?: number;
  /** Told once when Redis is unreachable and the breaker goes local. @default console.warn */
  onWarning?: (message: string) => void;
  clock?: Clock;
}

/**
 * A breaker shared by the fleet through Redis: the first few failures open it once for everyone,
 * and exactly one process at a time holds the half-open probe lease. If Redis cannot be reached
 * it degrades to a local breaker with the same settings, with a warning: never to no breaker.
 */
export class RedisCircuitBreaker implements Breaker {
  readonly #options: Required<Omit<RedisCircuitBreakerOptions, 'clock'>> & { clock: Clock };
  readonly #local: CircuitBreaker;
  #degraded = false;

  constructor(options: RedisCircuitBreakerOptions) {
    const cooldownMs = options.cooldownMs ?? 30_000;
    this.#options = {
      redis: options.redis,
      key: options.key,
      strategy: options.strategy ?? { type: 'consecutive', threshold: 5 },
      cooldownMs,
      probeLeaseMs: options.probeLeaseMs ?? cooldownMs,
      commandTimeoutMs: options.commandTimeoutMs ?? 500,
      onWarning: options.onWarning ?? ((message) => console.warn(message)),
      clock: options.clock ?? systemClock,
    };
    const strategy = this.#options.strategy;
    this.#local = new CircuitBreaker({
      strategy:
        strategy.type === 'consecutive' ? consecutiveFailures(strategy.threshold) : failureRate(strategy),
      cooldownMs,
      probeTimeoutMs: this.#options.probeLeaseMs,
      clock: this.#options.clock,
    });
  }

  /** True once Redis failed and the breaker runs locally. */
  get degraded(): boolean {
    return this.#degraded;
  }

  async acquire(): Promise<BreakerPermit> {
    if (this.#degraded) return this.#local.acquire();
    try {
      const reply = (await this.#command(
        this.#options.redis.eval(
          acquireScript,
          2,
          this.#options.key,
          `${this.#options.key}:probe`,
          this.#options.clock.now(),
          this.#options.cooldownMs,
          this.#options.probeLeaseMs,
        ),
      )) as [number, number, number];
      return reply[0] === 1
        ? { kind: 'allowed', probe: reply[1] === 1 }
        : { kind: 'open', retryInMs: reply[2] };
    } catch (error) {
      this.#degrade(error);
      return this.#local.acquire();
    }
  }

  async record(permit: BreakerPermit, ok: boolean): Promise<void> {
    if (permit.kind !== 'allowed') return;
    if (this.#degraded) return this.#local.record(permit, ok);
    const strategy = this.#options.strategy;
    try {
      await this.#command(
        this.#options.redis.eval(
          recordScript,
          2,
          this.#options.key,
          `${this.#options.key}:probe`,
          this.#options.clock.now(),
          ok ? 1 : 0,
          permit.probe ? 1 : 0,
          strategy.type,
          strategy.threshold,
          strategy.type === 'rate' ? strategy.windowMs : 0,
          strategy.type === 'rate' ? strategy.minimumCalls : 0,
        ),
      );
    } catch (error) {
      this.#degrade(error);
      this.#local.record(permit, ok);
    }
  }

  /**
   * The shared state: status, how many times the fleet's breaker opened from closed, and how many
   * failed probes sent it back to open.
   */
  async status(): Promise<{ status: string; opens: number; reopens: number }> {
    const raw = await this.#options.redis.hgetall(this.#options.key);
    return {
      status: raw['status'] ?? 'closed',
      opens: Number(raw['opens'] ?? 0),
      reopens: Number(raw['reopens'] ?? 0),
    };
  }

  #command<T>(promise: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer within ${this.#options.commandTimeoutMs} ms`)),
        this.#options.commandTimeoutMs,
      );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  #degrade(error: unknown): void {
    if (this.#degraded) return;
    this.#degraded = true;
    this.#options.onWarning(
      `reins: Redis unreachable for breaker "${this.#options.key}" (${error instanceof Error ? error.message : String(error)}); using a local breaker in this process`,
    );
  }
}
