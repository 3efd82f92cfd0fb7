import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { queuedRecord } from '../queue/run-stores.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import { RedisCheckpointStore } from '../redis/redis-checkpoint-store.js';
import type { TraceEvent } from '../trace/events.js';
import { BullmqRunQueue } from './bullmq-run-queue.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';
import { createRunWorker } from './run-worker.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
const day = 86_400_000;

describe('records and traces of ended runs expire (endedRunTtlMs)', () => {
  it('a record gets its TTL when it ends, not before, and not while it waits for a person', async ({
    skip,
  }) => {
    if (!redis) return skip();
    const prefix = uniquePrefix('ttl-registry');
    const registry = new RedisRunRegistry({ redis, prefix, endedRunTtlMs: day });
    await registry.create(queuedRecord('a', request, 1));
    await registry.create(queuedRecord('b', request, 2));
    await registry.start('a', 3, ['queued']);
    expect(await redis.pttl(`${prefix}:run:a`)).toBe(-1);
    await registry.update('b', { status: 'awaiting_approval' });
    expect(await redis.pttl(`${prefix}:run:b`)).toBe(-1);
    // Refused (wrong status): no TTL either.
    expect(await registry.update('a', { status: 'ended' }, ['queued'])).toBeUndefined();
    expect(await redis.pttl(`${prefix}:run:a`)).toBe(-1);
    await registry.update('a', { status: 'ended', outcome: { kind: 'answered', text: 'ok' } }, ['running']);
    const ttl = await redis.pttl(`${prefix}:run:a`);
    expect(ttl).toBeGreaterThan(day - 60_000);
    expect(ttl).toBeLessThanOrEqual(day);
    // A later write to the ended record (a late progress update) keeps the TTL.
    await registry.update('a', { steps: 3 });
    expect(await redis.pttl(`${prefix}:run:a`)).toBeGreaterThan(0);
    // Without the option nothing expires.
    const keepPrefix = uniquePrefix('ttl-keep');
    const keeping = new RedisRunRegistry({ redis, prefix: keepPrefix });
    await keeping.create(queuedRecord('c', request, 1));
    const ended = await keeping.update('c', { status: 'ended' });
    expect(ended?.status).toBe('ended');
    expect(await redis.pttl(`${keepPrefix}:run:c`)).toBe(-1);
  });

  it('a listing drops runs whose record expired and removes them from the actor’s index', async ({
    skip,
  }) => {
    if (!redis) return skip();
    const prefix = uniquePrefix('ttl-list');
    const registry = new RedisRunRegistry({ redis, prefix, endedRunTtlMs: day });
    for (const [id, at] of [
      ['old', 1],
      ['new', 2],
    ] as const)
      await registry.create(queuedRecord(id, request, at));
    await redis.del(`${prefix}:run:old`);
    expect((await registry.list({ actorId: 'ana' })).map((record) => record.runId)).toEqual(['new']);
    expect(await redis.zrange(`${prefix}:actor-runs:ana`, 0, -1)).toEqual(['new']);
  });

  it('a trace and its end marker expire after end', async ({ skip }) => {
    if (!redis) return skip();
    const prefix = uniquePrefix('ttl-events');
    const events = new RedisRunEventLog({ redis, prefix, endedRunTtlMs: day });
    const event = { v: 1, runId: 'r', seq: 0, at: 1, type: 'run-start' } as unknown as TraceEvent;
    await events.append('r', [event]);
    expect(await redis.pttl(`${prefix}:events:r`)).toBe(-1);
    await events.end('r');
    expect(await redis.pttl(`${prefix}:events:r`)).toBeGreaterThan(day - 60_000);
    expect(await redis.pttl(`${prefix}:events-ended:r`)).toBeGreaterThan(day - 60_000);
  });

  it('refuses a TTL that is not a positive whole number of ms', () => {
    const client = {} as Redis;
    for (const bad of [0, -5, 1.5, Number.NaN])
      expect(() => new RedisRunRegistry({ redis: client, endedRunTtlMs: bad })).toThrow(/endedRunTtlMs/);
    expect(
      () => new RedisRunEventLog({ redis: { defineCommand() {} } as unknown as Redis, endedRunTtlMs: 0 }),
    ).toThrow(/endedRunTtlMs/);
  });

  it('a queued run that ends leaves its record, trace and checkpoint to expire together', {
    timeout: 20_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const prefix = uniquePrefix('ttl-fleet');
    const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs', endedRunTtlMs: day });
    const connection = redis.duplicate({ maxRetriesPerRequest: null });
    const worker = await createRunWorker({
      redis: connection,
      prefix,
      queueName: 'runs',
      endedRunTtlMs: day,
      agents: agentRegistry([scriptedStepsAgent({ steps: 3, effect: () => {} })]),
      checkpoint: new RedisCheckpointStore({
        redis: connection,
        keyPrefix: `${prefix}:checkpoint`,
        endedRunTtlMs: day,
      }),
    });
    try {
      await queue.enqueue({ ...request, runId: 'done' });
      const until = Date.now() + 15_000;
      while ((await queue.registry.get('done'))?.status !== 'ended' && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 20));
      for (const key of [
        `${prefix}:run:done`,
        `${prefix}:events:done`,
        `${prefix}:events-ended:done`,
        `${prefix}:checkpoint:{done}:head`,
      ])
        expect(await redis.pttl(key), key).toBeGreaterThan(0);
    } finally {
      await worker.close();
      await queue.close();
      connection.disconnect();
    }
  });
});
