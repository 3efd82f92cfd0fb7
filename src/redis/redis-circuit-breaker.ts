import type { Redis } from 'ioredis';
import { errorInfo } from '../errors/error-info.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { consecutiveFailures, failureRate } from '../resilience/breaker-strategy.js';
import {
  type Breaker,
  type BreakerPermit,
  CircuitBreaker,
  durationOption,
} from '../resilience/circuit-breaker.js';
import type { Clock } from '../time/clock.js';
import { monotonicClock, monotonicView } from '../time/monotonic-clock.js';

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
  /** Finite, ≥ 0. @default 30_000 */
  cooldownMs?: number;
  /**
   * The half-open probe's exclusive lease, whole milliseconds ≥ 1; a probe that never reports frees
   * it after this. @default cooldownMs (at least 1)
   */
  probeLeaseMs?: number;
  /** A Redis command slower than this counts as Redis being down. @default 500 */
  commandTimeoutMs?: number;
  /**
   * While the breaker runs locally, the first call after this long asks Redis again; when Redis
   * answers, the breaker is shared again (with a second warning saying so). @default 5_000
   */
  recheckIntervalMs?: number;
  /** Told once when Redis is unreachable and the breaker goes local, and once when it is back. @default console.warn */
  onWarning?: (message: string) => void;
  /**
   * Read through a monotonic view: a clock that steps back does not stretch the cooldown.
   * @default monotonicClock
   */
  clock?: Clock;
}

type Strategy = NonNullable<RedisCircuitBreakerOptions['strategy']>;

function checkedStrategy(strategy: Strategy): Strategy {
  const { threshold } = strategy;
  if (strategy.type === 'consecutive') {
    if (!(Number.isInteger(threshold) && threshold >= 1))
      throw new ConfigurationError('strategy.threshold', `must be a whole number ≥ 1, got ${threshold}`);
    return { type: 'consecutive', threshold };
  }
  if (strategy.type !== 'rate')
    throw new ConfigurationError(
      'strategy.type',
      `must be 'consecutive' or 'rate', got ${String((strategy as { type: unknown }).type)}`,
    );
  const { windowMs, minimumCalls } = strategy;
  if (!(threshold > 0 && threshold <= 1))
    throw new ConfigurationError('strategy.threshold', `must be a share in (0, 1], got ${threshold}`);
  if (!(windowMs > 0 && windowMs < Number.POSITIVE_INFINITY))
    throw new ConfigurationError('strategy.windowMs', `must be a finite number > 0, got ${windowMs}`);
  if (!(Number.isInteger(minimumCalls) && minimumCalls >= 1))
    throw new ConfigurationError('strategy.minimumCalls', `must be a whole number ≥ 1, got ${minimumCalls}`);
  return { type: 'rate', threshold, windowMs, minimumCalls };
}

/**
 * A breaker shared by the fleet through Redis: the first few failures open it once for everyone,
 * and exactly one process at a time holds the half-open probe lease. If Redis cannot be reached
 * it degrades to a local breaker with the same settings, with a warning: never to no breaker. While
 * local, the first call after `recheckIntervalMs` asks Redis again, and once Redis answers the
 * breaker follows the shared state again. Pass `record` the permit `acquire` returned: a permit the
 * local breaker gave is reported to the local breaker, never to the shared state.
 */
export class RedisCircuitBreaker implements Breaker {
  readonly #options: Required<Omit<RedisCircuitBreakerOptions, 'clock' | 'strategy'>> & {
    clock: Clock;
    strategy: Strategy;
  };
  #local: CircuitBreaker;
  /** Permits the local breaker gave, so they are never recorded in the shared state. */
  readonly #localPermits = new WeakSet<BreakerPermit>();
  #degraded = false;
  /** When Redis was last found unreachable (or last asked while degraded). */
  #lastFailureAt = 0;
  #rechecking = false;

  constructor(options: RedisCircuitBreakerOptions) {
    if (typeof options.key !== 'string' || options.key.length === 0)
      throw new ConfigurationError('key', 'must be a non-empty string');
    const cooldownMs = durationOption('cooldownMs', options.cooldownMs ?? 30_000);
    const probeLeaseMs = options.probeLeaseMs ?? Math.max(1, Math.ceil(cooldownMs));
    // The lease is a Redis PX: a whole number of milliseconds, at least 1.
    if (!(Number.isInteger(probeLeaseMs) && probeLeaseMs >= 1))
      throw new ConfigurationError(
        'probeLeaseMs',
        `must be a whole number of milliseconds ≥ 1, got ${probeLeaseMs}`,
      );
    const commandTimeoutMs = options.commandTimeoutMs ?? 500;
    if (!(commandTimeoutMs > 0 && commandTimeoutMs < Number.POSITIVE_INFINITY))
      throw new ConfigurationError(
        'commandTimeoutMs',
        `must be a finite number > 0, got ${commandTimeoutMs}`,
      );
    this.#options = {
      redis: options.redis,
      key: options.key,
      strategy: checkedStrategy(options.strategy ?? { type: 'consecutive', threshold: 5 }),
      cooldownMs,
      probeLeaseMs,
      commandTimeoutMs,
      recheckIntervalMs: durationOption('recheckIntervalMs', options.recheckIntervalMs ?? 5_000),
      onWarning: options.onWarning ?? ((message) => console.warn(message)),
      // Cooldowns are durations: wall-clock steps must not stretch them.
      clock: monotonicView(options.clock ?? monotonicClock),
    };
    this.#local = this.#newLocal();
  }

  /** True while Redis is unreachable and the breaker runs locally. */
  get degraded(): boolean {
    return this.#degraded;
  }

  async acquire(): Promise<BreakerPermit> {
    let recheck = false;
    if (this.#degraded) {
      const due = this.#options.clock.now() - this.#lastFailureAt >= this.#options.recheckIntervalMs;
      // One recheck at a time; the calls meanwhile stay local.
      if (!due || this.#rechecking) return this.#localAcquire();
      this.#rechecking = recheck = true;
    }
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
      if (this.#degraded) this.#recover();
      return reply[0] === 1
        ? { kind: 'allowed', probe: reply[1] === 1 }
        : { kind: 'open', retryInMs: reply[2] };
    } catch (error) {
      this.#degrade(error);
      return this.#localAcquire();
    } finally {
      if (recheck) this.#rechecking = false;
    }
  }

  async record(permit: BreakerPermit, ok: boolean): Promise<void> {
    if (permit.kind !== 'allowed') return;
    if (this.#localPermits.has(permit) || this.#degraded) return this.#local.record(permit, ok);
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

  #localAcquire(): BreakerPermit {
    const permit = this.#local.acquire();
    this.#localPermits.add(permit);
    return permit;
  }

  #newLocal(): CircuitBreaker {
    const strategy = this.#options.strategy;
    return new CircuitBreaker({
      strategy:
        strategy.type === 'consecutive' ? consecutiveFailures(strategy.threshold) : failureRate(strategy),
      cooldownMs: this.#options.cooldownMs,
      probeTimeoutMs: this.#options.probeLeaseMs,
      clock: this.#options.clock,
    });
  }

  #degrade(error: unknown): void {
    this.#lastFailureAt = this.#options.clock.now();
    if (this.#degraded) return;
    this.#degraded = true;
    // Each outage starts from a closed local breaker: what an earlier one saw is stale.
    this.#local = this.#newLocal();
    this.#warn(
      `reins: Redis unreachable for breaker "${this.#options.key}" (${errorInfo(error).message}); using a local breaker in this process until Redis answers again`,
    );
  }

  #warn(message: string): void {
    try {
      this.#options.onWarning(message);
    } catch {
      // A warning callback that throws must not take the breaker down with it.
    }
  }

  #recover(): void {
    this.#degraded = false;
    this.#warn(`reins: Redis answers again for breaker "${this.#options.key}"; back to the shared breaker`);
  }
}
