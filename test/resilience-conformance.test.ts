import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RedisCircuitBreaker,
  RedisDeadLetterStore,
  RedisRetryBudget,
  RedisSpendLimiter,
} from '../src/redis/index.js';
import {
  type Breaker,
  budgetViolations,
  CircuitBreaker,
  consecutiveFailures,
  type DeadLetter,
  type DeadLetterStore,
  MemoryDeadLetterStore,
  MemorySpendLimiter,
  type RetryBudget,
  type RetryBudgetOptions,
  type SpendLimiter,
  TokenBucketRetryBudget,
} from '../src/resilience/index.js';
import { SqliteDeadLetterStore } from '../src/sqlite/index.js';
import { type FakeClock, fakeClock } from '../src/testing/index.js';
import { connectTestRedis, uniquePrefix } from './support/redis.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

type BudgetFactory = (options: RetryBudgetOptions & { clock: FakeClock }) => RetryBudget;
const budgets: [string, BudgetFactory][] = [
  ['in-process', (options) => new TokenBucketRetryBudget(options)],
  ['redis', (options) => new RedisRetryBudget({ ...options, redis: redis!, key: uniquePrefix('budget') })],
];

describe.each(budgets)('retry budget conformance: %s', (name, make) => {
  const skip = () => name === 'redis' && redis === undefined;

  it('starts full, denies when empty, and never leaves [0, capacity] (both clamps)', async ({
    skip: skipTest,
  }) => {
    if (skip()) return skipTest();
    const clock = fakeClock();
    const budget = make({ clock, capacity: 3, ratio: 0.5, minPerSecond: 0 });
    const grants = [];
    for (let i = 0; i < 5; i++) grants.push(await budget.withdraw('transient'));
    expect(grants.map((grant) => grant.granted)).toEqual([true, true, true, false, false]);
    expect(grants.at(-1)!.tokens).toBe(0);
    for (let i = 0; i < 20; i++) await budget.deposit();
    expect((await budget.withdraw('transient')).tokens).toBe(2);
    expect(await budget.stats()).toMatchObject({ granted: 4, denied: 2, successes: 20 });
  });

  it('refills at minPerSecond on the injected clock, and a clock stepping back refills nothing', async ({
    skip: skipTest,
  }) => {
    if (skip()) return skipTest();
    const clock = fakeClock();
    const budget = make({ clock, capacity: 10, ratio: 0, minPerSecond: 2 });
    for (let i = 0; i < 10; i++) await budget.withdraw('transient');
    clock.advance(1_500);
    expect((await budget.withdraw('transient')).tokens).toBe(2);
    clock.set(clock.now() - 60_000);
    expect((await budget.withdraw('transient')).tokens).toBe(1);
    clock.advance(100_000);
    expect((await budget.withdraw('transient')).tokens).toBe(9);
  });

  it('the AWS retry-quota vector: two retries then success goes 500 → 486 → 472 → 486', async ({
    skip: skipTest,
  }) => {
    if (skip()) return skipTest();
    const budget = make({
      clock: fakeClock(),
      capacity: 500,
      ratio: 1,
      minPerSecond: 0,
      retryCost: { transient: 14, throttled: 5 },
      refundOnSuccess: true,
    });
    const first = await budget.withdraw('transient');
    expect(first).toEqual({ granted: true, cost: 14, tokens: 486 });
    const second = await budget.withdraw('transient');
    expect(second.tokens).toBe(472);
    await budget.deposit(second);
    const probe = await budget.withdraw('throttled');
    expect(probe.tokens).toBe(486 - 5);
  });

  it('is accurate to ±1 over 10,000 requests at several ratios', { timeout: 60_000 }, async ({
    skip: skipTest,
  }) => {
    if (skip()) return skipTest();
    for (const ratio of [0.01, 0.05, 0.2, 0.5]) {
      const clock = fakeClock();
      const capacity = 10;
      const budget = make({ clock, capacity, ratio, minPerSecond: 0 });
      let granted = 0;
      for (let i = 0; i < 10_000; i++) {
        await budget.deposit();
        if ((await budget.withdraw('transient')).granted) granted++;
      }
      expect(
        Math.abs(granted - (capacity + ratio * 10_000)),
        `ratio ${ratio}: ${granted} granted`,
      ).toBeLessThanOrEqual(1);
      const options = { capacity, ratio, minPerSecond: 0 };
      expect(budgetViolations(await budget.stats(), options, clock.now())).toBe(0);
    }
  });
});

type BreakerFactory = (clock: FakeClock) => Breaker;
const breakers: [string, BreakerFactory][] = [
  [
    'in-process',
    (clock) => new CircuitBreaker({ clock, strategy: consecutiveFailures(3), cooldownMs: 1_000 }),
  ],
  [
    'redis',
    (clock) =>
      new RedisCircuitBreaker({
        redis: redis!,
        key: uniquePrefix('breaker'),
        clock,
        strategy: { type: 'consecutive', threshold: 3 },
        cooldownMs: 1_000,
        probeLeaseMs: 60_000,
      }),
  ],
];

describe.each(breakers)('circuit breaker conformance: %s', (name, make) => {
  it('opens after the threshold, fails fast while open, lets exactly one concurrent probe through', async ({
    skip: skipTest,
  }) => {
    if (name === 'redis' && redis === undefined) return skipTest();
    const clock = fakeClock();
    const breaker = make(clock);
    for (let i = 0; i < 3; i++) await breaker.record(await breaker.acquire(), false);
    expect(await breaker.acquire()).toEqual({ kind: 'open', retryInMs: 1_000 });
    clock.advance(999);
    expect(await breaker.acquire()).toEqual({ kind: 'open', retryInMs: 1 });
    clock.advance(1);
    const permits = await Promise.all(Array.from({ length: 8 }, () => breaker.acquire()));
    const probes = permits.filter((permit) => permit.kind === 'allowed');
    expect(probes).toEqual([{ kind: 'allowed', probe: true }]);
    await breaker.record(probes[0]!, false);
    expect((await breaker.acquire()).kind).toBe('open');
    clock.advance(1_000);
    const probe = await breaker.acquire();
    expect(probe).toEqual({ kind: 'allowed', probe: true });
    await breaker.record(probe, true);
    expect(await breaker.acquire()).toEqual({ kind: 'allowed', probe: false });
  });

  it('a clock stepping back does not keep it open past its cooldown', async ({ skip: skipTest }) => {
    if (name === 'redis' && redis === undefined) return skipTest();
    const clock = fakeClock();
    const breaker = make(clock);
    for (let i = 0; i < 3; i++) await breaker.record(await breaker.acquire(), false);
    expect(await breaker.acquire()).toEqual({ kind: 'open', retryInMs: 1_000 });
    clock.set(clock.now() - 3_600_000);
    expect(await breaker.acquire()).toEqual({ kind: 'open', retryInMs: 1_000 });
    clock.advance(1_000);
    expect(await breaker.acquire()).toEqual({ kind: 'allowed', probe: true });
  });

  it('a success resets the consecutive count', async ({ skip: skipTest }) => {
    if (name === 'redis' && redis === undefined) return skipTest();
    const breaker = make(fakeClock());
    for (const ok of [false, false, true, false, false]) await breaker.record(await breaker.acquire(), ok);
    expect((await breaker.acquire()).kind).toBe('allowed');
  });
});

describe('breaker state and the shared breaker', () => {
  it('saves and restores an in-process breaker', () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker({ clock, strategy: consecutiveFailures(2), cooldownMs: 500 });
    breaker.record(breaker.acquire(), false);
    breaker.record(breaker.acquire(), false);
    const restored = CircuitBreaker.restore(JSON.parse(JSON.stringify(breaker.snapshot())), {
      clock,
      cooldownMs: 500,
    });
    expect(restored.status).toBe('open');
    expect(restored.opens).toBe(1);
    clock.advance(500);
    expect(restored.acquire()).toEqual({ kind: 'allowed', probe: true });
    expect(() => CircuitBreaker.restore({ version: 2 } as never)).toThrow(/version 2/);
  });

  it('two processes\u2019 breakers on one key share state; the fleet opens it once', async ({
    skip: skipTest,
  }) => {
    if (redis === undefined) return skipTest();
    const clock = fakeClock();
    const key = uniquePrefix('shared');
    const a = new RedisCircuitBreaker({
      redis,
      key,
      clock,
      strategy: { type: 'consecutive', threshold: 2 },
      cooldownMs: 1_000,
    });
    const b = new RedisCircuitBreaker({
      redis,
      key,
      clock,
      strategy: { type: 'consecutive', threshold: 2 },
      cooldownMs: 1_000,
    });
    await a.record(await a.acquire(), false);
    await b.record(await b.acquire(), false);
    expect((await b.acquire()).kind).toBe('open');
    expect((await a.acquire()).kind).toBe('open');
    expect(await a.status()).toEqual({ status: 'open', opens: 1, reopens: 0 });
  });

  it('a lost half-open probe frees its lease after probeLeaseMs', async ({ skip: skipTest }) => {
    if (redis === undefined) return skipTest();
    const clock = fakeClock();
    const breaker = new RedisCircuitBreaker({
      redis,
      key: uniquePrefix('lease'),
      clock,
      strategy: { type: 'consecutive', threshold: 1 },
      cooldownMs: 10,
      probeLeaseMs: 40,
    });
    await breaker.record(await breaker.acquire(), false);
    clock.advance(10);
    expect(await breaker.acquire()).toEqual({ kind: 'allowed', probe: true });
    expect((await breaker.acquire()).kind).toBe('open');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await breaker.acquire()).toEqual({ kind: 'allowed', probe: true });
  });

  it('with Redis unreachable it degrades to a local breaker with a warning, never to none', async () => {
    const { Redis } = await import('ioredis');
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    const warnings: string[] = [];
    const clock = fakeClock();
    const breaker = new RedisCircuitBreaker({
      redis: dead,
      key: 'x',
      clock,
      strategy: { type: 'consecutive', threshold: 2 },
      cooldownMs: 1_000,
      commandTimeoutMs: 200,
      onWarning: (message) => warnings.push(message),
    });
    await breaker.record(await breaker.acquire(), false);
    await breaker.record(await breaker.acquire(), false);
    expect(await breaker.acquire()).toMatchObject({ kind: 'open' });
    expect(breaker.degraded).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/using a local breaker/);
    dead.disconnect();
  });
});

type StoreFactory = () => DeadLetterStore;
const dir = mkdtempSync(join(tmpdir(), 'reins-dlq-'));
const stores: [string, StoreFactory][] = [
  ['memory', () => new MemoryDeadLetterStore()],
  ['sqlite', () => new SqliteDeadLetterStore({ database: join(dir, `${Math.random()}.db`) })],
  ['redis', () => new RedisDeadLetterStore({ redis: redis!, key: uniquePrefix('dlq') })],
];
const letter = (id: string, at: number): DeadLetter => ({
  id,
  source: 'enrich',
  payload: { record: id },
  error: { name: 'Error', message: 'HTTP 400' },
  classification: 'terminal',
  attempts: 1,
  firstFailedAtMs: at,
  lastFailedAtMs: at,
});

describe.each(stores)('dead-letter store conformance: %s', (name, make) => {
  it('adds, lists in failure order, updates without duplicating, releases and purges', async ({
    skip: skipTest,
  }) => {
    if (name === 'redis' && redis === undefined) return skipTest();
    const store = make();
    await store.add(letter('b', 2_000));
    await store.add(letter('a', 1_000));
    await store.add({ ...letter('a', 3_000), attempts: 3 });
    expect(await store.count()).toBe(2);
    const listed = await store.list();
    expect(listed.map((item) => item.id)).toEqual(['b', 'a']);
    expect(listed[1]).toMatchObject({ attempts: 3, firstFailedAtMs: 1_000, lastFailedAtMs: 3_000 });
    expect(await store.release('b')).toMatchObject({ id: 'b', payload: { record: 'b' } });
    expect(await store.release('b')).toBeUndefined();
    expect(await store.get('a')).toMatchObject({ id: 'a' });
    expect(await store.purge()).toBe(1);
    expect(await store.count()).toBe(0);
  });
});

const limiters: [string, (clock: FakeClock) => SpendLimiter][] = [
  ['memory', (clock) => new MemorySpendLimiter({ clock, windowMs: 60_000 })],
  [
    'redis',
    (clock) => new RedisSpendLimiter({ redis: redis!, key: uniquePrefix('spend'), clock, windowMs: 60_000 }),
  ],
];
describe.each(limiters)('spend limiter conformance: %s', (name, make) => {
  it('adds per account within a window and starts over in the next', async ({ skip: skipTest }) => {
    if (name === 'redis' && redis === undefined) return skipTest();
    const clock = fakeClock();
    const limiter = make(clock);
    await limiter.add('acme', 0.25);
    expect(await limiter.add('acme', 0.5)).toBeCloseTo(0.75, 10);
    expect(await limiter.spent('other')).toBe(0);
    clock.advance(60_000);
    expect(await limiter.spent('acme')).toBe(0);
  });
});
