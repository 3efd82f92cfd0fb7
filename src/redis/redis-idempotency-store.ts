import type { Redis } from 'ioredis';
import { ReinsError } from '../errors/reins-error.js';
import {
  type FinishRequest,
  type IdempotencyStore,
  parseStored as parse,
  type ReserveOutcome,
  type ReserveRequest,
  type StoredFailure,
} from '../idempotency/store.js';

// The same decision as decideReserve, in Lua so it is atomic in Redis. Records expire with their retention.
const reserveScript = `
local now = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local retention = tonumber(ARGV[5])
local r = redis.call('HMGET', KEYS[1], 'fingerprint', 'status', 'leaseUntil', 'result', 'failure', 'expiresAt')
-- Expiry follows the caller's clock (expiresAt); PEXPIRE only collects garbage, a day later.
if r[1] == false or (r[6] and tonumber(r[6]) <= now) then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'status', 'in_progress', 'token', ARGV[2], 'leaseUntil', now + lease, 'expiresAt', now + retention)
  redis.call('PEXPIRE', KEYS[1], retention + 86400000)
  return {'reserved'}
end
if r[1] ~= ARGV[1] then return {'fingerprint_mismatch'} end
if r[2] == 'completed' then return {'completed', r[4]} end
if r[2] == 'failed' then return {'failed', r[5]} end
local leaseUntil = tonumber(r[3])
if now < leaseUntil then return {'in_progress', tostring(leaseUntil)} end
redis.call('HSET', KEYS[1], 'token', ARGV[2], 'leaseUntil', now + lease)
return {'taken_over'}
`;

const finishScript = `
local r = redis.call('HMGET', KEYS[1], 'token', 'status')
if r[1] ~= ARGV[1] then return 0 end
if r[2] ~= 'in_progress' then
  if r[2] == ARGV[2] then return 1 end
  return 0
end
if ARGV[2] == 'release' then
  redis.call('DEL', KEYS[1])
  return 1
end
if ARGV[2] == 'expire' then
  redis.call('HSET', KEYS[1], 'leaseUntil', ARGV[3])
  return 1
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], ARGV[4], ARGV[5], 'expiresAt', tonumber(ARGV[6]) + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + 86400000)
return 1
`;

/** Idempotency records in Redis for a fleet: a hash per key, decided by atomic scripts, expiring with retention. */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: { redis: Redis; key: string }) {
    this.#redis = options.redis;
    this.#prefix = options.key;
    if (!('reinsIdemReserveV2' in this.#redis)) {
      this.#redis.defineCommand('reinsIdemReserveV2', { numberOfKeys: 1, lua: reserveScript });
      this.#redis.defineCommand('reinsIdemFinishV2', { numberOfKeys: 1, lua: finishScript });
    }
  }

  async reserve(request: ReserveRequest): Promise<ReserveOutcome> {
    const reply = (await this.#command(
      'reinsIdemReserveV2',
      this.#key(request.key),
      request.fingerprint,
      request.token,
      request.nowMs,
      request.leaseMs,
      request.retentionMs,
    )) as string[];
    switch (reply[0]) {
      case 'reserved':
      case 'taken_over':
      case 'fingerprint_mismatch':
        return { kind: reply[0] };
      case 'completed':
        return { kind: 'completed', result: parse(reply[1] ?? 'null', request.key) };
      case 'failed':
        return { kind: 'failed', failure: parse(reply[1] ?? 'null', request.key) as StoredFailure };
      case 'in_progress':
        return { kind: 'in_progress', leaseUntilMs: Number(reply[1]) };
      default:
        throw new ReinsError('corrupt_record', `unexpected reply for ${request.key}: ${String(reply[0])}`);
    }
  }

  async complete(request: FinishRequest & { result: unknown }): Promise<boolean> {
    return (
      (await this.#command(
        'reinsIdemFinishV2',
        this.#key(request.key),
        request.token,
        'completed',
        request.retentionMs,
        'result',
        JSON.stringify(request.result ?? null),
        request.nowMs,
      )) === 1
    );
  }

  async fail(request: FinishRequest & { failure: StoredFailure }): Promise<boolean> {
    return (
      (await this.#command(
        'reinsIdemFinishV2',
        this.#key(request.key),
        request.token,
        'failed',
        request.retentionMs,
        'failure',
        JSON.stringify(request.failure),
        request.nowMs,
      )) === 1
    );
  }

  async release(request: { key: string; token: string }): Promise<boolean> {
    return (
      (await this.#command(
        'reinsIdemFinishV2',
        this.#key(request.key),
        request.token,
        'release',
        0,
        '',
        '',
        0,
      )) === 1
    );
  }

  async expireLease(request: { key: string; token: string; nowMs: number }): Promise<boolean> {
    return (
      (await this.#command(
        'reinsIdemFinishV2',
        this.#key(request.key),
        request.token,
        'expire',
        request.nowMs,
        '',
        '',
        0,
      )) === 1
    );
  }

  #key(key: string): string {
    return `${this.#prefix}:${key}`;
  }

  #command(name: string, ...args: (string | number)[]): Promise<unknown> {
    return (this.#redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!.apply(
      this.#redis,
      args,
    );
  }
}
