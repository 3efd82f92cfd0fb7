/**
 * One worker of the fleet benchmark, run as its own process: drains the shared queue through
 * either the naive three-layer retry stack or reins' controls. Configuration comes as JSON in argv.
 */
import { Redis } from 'ioredis';
import { errorInfo } from '../errors/error-info.js';
import { RedisCircuitBreaker } from '../redis/redis-circuit-breaker.js';
import { RedisDeadLetterStore } from '../redis/redis-dead-letter-store.js';
import { RedisRetryBudget } from '../redis/redis-retry-budget.js';
import { decorrelatedJitterBackoff, exponentialBackoff } from '../resilience/backoff.js';
import { retry } from '../resilience/retry.js';
import { sleep } from '../resilience/sleep.js';
import { seededRandom } from '../testing/seeded-random.js';
import type { WorkerConfig } from './worker-config.js';

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
const key = (name: string) => `${config.prefix}:${name}`;
const random = seededRandom(config.seed);

class HttpError extends Error {
  readonly status: number;
  constructor(status: number) {
    super(`HTTP ${status}`);
    this.status = status;
  }
}

async function post(id: string, payload: unknown, isRetry: boolean): Promise<void> {
  const response = await fetch(config.serviceUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-retry': isRetry ? '1' : '0' },
    body: JSON.stringify({ id, payload }),
    signal: AbortSignal.timeout(5_000),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new HttpError(response.status);
}

interface Item {
  id: string;
  jobAttempt: number;
  httpAttempts: number;
}

async function naive(item: Item, payload: unknown): Promise<void> {
  // Every error retried at three layers: tool 5 × agent 5 × job 3, backoff in milliseconds.
  for (let plan = 0; plan < config.naive.agentRetries; plan++) {
    for (let attempt = 0; attempt < config.naive.toolRetries; attempt++) {
      try {
        await post(item.id, payload, item.httpAttempts++ > 0);
        await redis.sadd(key('enriched'), item.id);
        return;
      } catch {
        await sleep(config.naive.baseMs * 2 ** attempt);
      }
    }
  }
  if (item.jobAttempt < config.naive.jobRetries) {
    await redis.rpush(key('queue'), JSON.stringify({ ...item, jobAttempt: item.jobAttempt + 1 }));
  } else {
    await redis.sadd(key('failed'), item.id);
  }
}

const breaker = config.reins.breaker
  ? new RedisCircuitBreaker({
      redis,
      key: key('breaker'),
      strategy: { type: 'consecutive', threshold: config.reins.breakerThreshold },
      cooldownMs: config.reins.cooldownMs,
      onWarning: () => {},
    })
  : undefined;
const budget = config.reins.budget
  ? new RedisRetryBudget({ redis, key: key('budget'), ...config.reins.budgetOptions })
  : undefined;
const deadLetters = new RedisDeadLetterStore({ redis, key: key('dlq') });

async function controlled(item: Item, payload: unknown): Promise<void> {
  const backoffOptions = { baseMs: config.reins.baseMs, capMs: config.reins.capMs };
  const outcome = await retry(() => post(item.id, payload, item.httpAttempts++ > 0), {
    maxAttempts: config.reins.maxAttempts,
    backoff:
      config.reins.backoff === 'decorrelated'
        ? decorrelatedJitterBackoff(backoffOptions)
        : exponentialBackoff(backoffOptions),
    random,
    ...(breaker ? { breaker } : {}),
    ...(budget ? { budget } : {}),
  });
  if (outcome.kind === 'ok') {
    await redis.sadd(key('enriched'), item.id);
    return;
  }
  if (outcome.kind === 'circuit_open') {
    // The dependency is down, not the item: wait out the breaker and put the item back.
    await sleep(Math.min(outcome.retryInMs, config.reins.cooldownMs) + random() * 50);
    await redis.rpush(key('queue'), JSON.stringify(item));
    return;
  }
  if (outcome.kind === 'cancelled') return;
  const transient = 'classification' in outcome && outcome.classification.kind !== 'terminal';
  if (transient && item.httpAttempts < config.reins.maxTotalAttempts) {
    // Still worth doing, just not now: back on the queue after a pause, within a bounded total.
    await sleep(config.reins.baseMs * (1 + random()));
    await redis.rpush(key('queue'), JSON.stringify(item));
    return;
  }
  const now = Date.now();
  await deadLetters.add({
    id: item.id,
    source: 'enrich',
    payload,
    error: errorInfo(outcome.error),
    classification: 'classification' in outcome ? outcome.classification.kind : 'terminal',
    attempts: item.httpAttempts,
    firstFailedAtMs: now,
    lastFailedAtMs: now,
  });
}

// Pop an item, mark this handler busy and read the record in one round trip.
const takeScript = `
local raw = redis.call('LPOP', KEYS[1])
if not raw then return false end
redis.call('INCR', KEYS[2])
local item = cjson.decode(raw)
return {raw, redis.call('HGET', KEYS[3], item.id) or '{}'}
`;

async function handler(): Promise<void> {
  while (true) {
    const taken = (await redis.eval(takeScript, 3, key('queue'), key('busy'), key('records'))) as
      | [string, string]
      | null;
    if (taken === null) {
      // Others may still push items back (re-queues); leave only when nobody is working.
      if (Number(await redis.get(key('busy'))) === 0) return;
      await sleep(20);
      continue;
    }
    try {
      const item = JSON.parse(taken[0]) as Item;
      const payload = JSON.parse(taken[1]) as unknown;
      await (config.mode === 'naive' ? naive(item, payload) : controlled(item, payload));
    } finally {
      await redis.decr(key('busy'));
    }
  }
}

// Start together: a fleet fails at the same instant when its dependency does. Warm the HTTP
// client and the Redis connection first, so the first request is not held up by either.
await Promise.all(
  Array.from({ length: config.concurrency }, async () =>
    (await fetch(config.serviceUrl.replace(/\/enrich$/, '/health'))).arrayBuffer(),
  ),
);
await redis.ping();
await redis.incr(key('ready'));
let startAtMs = Number(await redis.get(key('start')));
while (!startAtMs) {
  await sleep(5);
  startAtMs = Number(await redis.get(key('start')));
}
await sleep(Math.max(0, startAtMs - Date.now()));
await Promise.all(Array.from({ length: config.concurrency }, () => handler()));
redis.disconnect();
