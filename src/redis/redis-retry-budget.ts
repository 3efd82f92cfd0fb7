import type { Redis } from 'ioredis';
import {
  type ResolvedBudget,
  type RetryBudget,
  type RetryBudgetOptions,
  type RetryBudgetStats,
  type RetryGrant,
  type RetryKind,
  resolveBudget,
} from '../resilience/retry-budget.js';
import { type Clock, systemClock } from '../time/clock.js';

// One script for both operations, so refill, decision and write happen atomically in Redis.
// Arithmetic in the same order as TokenBucketRetryBudget: the conformance suite holds both to it.
const budgetScript = `
local now = tonumber(ARGV[1])
local op = ARGV[2]
local amount = tonumber(ARGV[3])
local capacity = tonumber(ARGV[4])
local rate = tonumber(ARGV[5])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updatedAt', 'createdAt', 'granted', 'denied', 'successes')
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
local created = tonumber(state[3])
local granted = tonumber(state[4]) or 0
local denied = tonumber(state[5]) or 0
local successes = tonumber(state[6]) or 0
if tokens == nil then
  tokens = capacity
  updated = now
  created = now
end
if now > updated then
  tokens = math.min(capacity, tokens + (rate * (now - updated)) / 1000)
  updated = now
end
local result = '1'
if op == 'withdraw' then
  if tokens >= amount then
    tokens = math.max(0, tokens - amount)
    granted = granted + 1
  else
    result = '0'
    denied = denied + 1
  end
else
  tokens = math.min(capacity, tokens + amount)
  successes = successes + 1
end
local text = string.format('%.17g', tokens)
redis.call('HSET', KEYS[1], 'tokens', text, 'updatedAt', updated, 'createdAt', created, 'granted', granted, 'denied', denied, 'successes', successes)
return result .. text
`;

const commandName = 'reinsRetryBudgetV2';

export interface RedisRetryBudgetOptions extends RetryBudgetOptions {
  redis: Redis;
  /** The Redis key of this budget; every process using the same key shares one bucket. */
  key: string;
}

/**
 * A retry budget shared by every process that names the same key: one token bucket in Redis,
 * updated atomically by a Lua script, with the same semantics as `TokenBucketRetryBudget`.
 */
export class RedisRetryBudget implements RetryBudget {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #params: ResolvedBudget;
  readonly #clock: Clock;

  constructor(options: RedisRetryBudgetOptions) {
    this.#redis = options.redis;
    this.#key = options.key;
    this.#params = resolveBudget(options);
    this.#clock = options.clock ?? systemClock;
  }

  async withdraw(kind: RetryKind): Promise<RetryGrant> {
    const cost = kind === 'throttled' ? this.#params.throttledCost : this.#params.transientCost;
    const [granted, tokens] = await this.#run('withdraw', cost);
    return granted ? { granted: true, cost, tokens } : { granted: false, cost: 0, tokens };
  }

  async deposit(retried?: RetryGrant): Promise<void> {
    const credit = this.#params.refundOnSuccess && retried?.granted ? retried.cost : this.#params.ratio;
    await this.#run('deposit', credit);
  }

  async stats(): Promise<RetryBudgetStats> {
    const raw = await this.#redis.hgetall(this.#key);
    return {
      granted: Number(raw['granted'] ?? 0),
      denied: Number(raw['denied'] ?? 0),
      successes: Number(raw['successes'] ?? 0),
      createdAtMs: Number(raw['createdAt'] ?? this.#clock.now()),
    };
  }

  async #run(op: 'withdraw' | 'deposit', amount: number): Promise<[boolean, number]> {
    // A named command runs by EVALSHA: the script travels once per connection, not per decision.
    if (!(commandName in this.#redis))
      this.#redis.defineCommand(commandName, { numberOfKeys: 1, lua: budgetScript });
    const run = (this.#redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[
      commandName
    ] as (...args: unknown[]) => Promise<unknown>;
    const reply = (await run.call(
      this.#redis,
      this.#key,
      this.#clock.now(),
      op,
      amount,
      this.#params.capacity,
      this.#params.minPerSecond,
    )) as string;
    // One string, the verdict digit then the tokens: the cheapest reply to parse.
    return [reply[0] === '1', Number(reply.slice(1))];
  }
}
