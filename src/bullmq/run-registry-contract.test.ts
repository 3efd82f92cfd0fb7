import fc from 'fast-check';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTable } from '../../test/support/pg-tables.js';
import { connectTestPostgres } from '../../test/support/postgres.js';
import { connectTestRedis, uniquePrefix } from '../../test/support/redis.js';
import { PostgresRunRegistry } from '../pgboss/postgres-run-registry.js';
import { MemoryRunRegistry } from '../queue/memory-run-registry.js';
import type { RunRecordStatus } from '../queue/run-queue.js';
import { queuedRecord, type RunRecordStore } from '../queue/run-stores.js';
import { RedisRunRegistry } from './redis-run-registry.js';

let redis: Redis | undefined;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
  pool = await connectTestPostgres();
});
afterAll(async () => {
  redis?.disconnect();
  await pool?.end();
});

/** A PostgreSQL registry on its own fresh tables. */
const postgresRegistry = (db: pg.Pool) =>
  new PostgresRunRegistry({ pool: db, schema: 'reins_test', table: uniqueTable('runs') });

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
const statuses: RunRecordStatus[] = ['queued', 'running', 'awaiting_approval', 'cancelling', 'ended'];

describe('RunRecordStore.start (memory, Redis and PostgreSQL)', () => {
  const registries = (): [string, () => RunRecordStore][] => [
    ['memory', () => new MemoryRunRegistry()],
    ...(redis
      ? ([
          ['redis', () => new RedisRunRegistry({ redis: redis as Redis, prefix: uniquePrefix('registry') })],
        ] as [string, () => RunRecordStore][])
      : []),
    ...(pool
      ? ([['postgres', () => postgresRegistry(pool as pg.Pool)]] as [string, () => RunRecordStore][])
      : []),
  ];

  it('takes a queued run (running, one more attempt, stamped) and refuses an ended, cancelling or unknown one', async () => {
    for (const [name, make] of registries()) {
      const registry = make();
      await registry.create(queuedRecord('r1', request, 100));
      const started = await registry.start?.('r1', 250, ['queued', 'running', 'awaiting_approval']);
      expect(started, name).toMatchObject({ runId: 'r1', status: 'running', attempts: 1, updatedAt: 250 });
      expect(await registry.get('r1'), name).toEqual(started);
      for (const status of ['ended', 'cancelling'] as const) {
        await registry.update('r1', { status });
        expect(
          await registry.start?.('r1', 300, ['queued', 'running', 'awaiting_approval']),
          name,
        ).toBeUndefined();
        expect((await registry.get('r1'))?.attempts, name).toBe(1);
      }
      expect(await registry.start?.('nobody', 300, ['queued']), name).toBeUndefined();
      expect(await registry.get('nobody'), name).toBeUndefined();
    }
  });

  it('of two workers taking one queued run, exactly one gets it', async () => {
    for (const [name, make] of registries()) {
      const registry = make();
      await registry.create(queuedRecord('r2', request, 100));
      const both = await Promise.all([
        registry.start?.('r2', 1, ['queued']),
        registry.start?.('r2', 2, ['queued']),
      ]);
      expect(both.filter(Boolean), name).toHaveLength(1);
      expect((await registry.get('r2'))?.attempts, name).toBe(1);
    }
  });

  it('property: any sequence of starts and updates leaves the Redis and PostgreSQL registries where the memory one is', async ({
    skip,
  }) => {
    if (!redis || !pool) return skip();
    const db = pool;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('start' as const), at: fc.nat(10_000), from: fc.subarray(statuses) }),
      fc.record({
        kind: fc.constant('update' as const),
        status: fc.constantFrom(...statuses),
        steps: fc.nat(50),
        from: fc.option(fc.subarray(statuses), { nil: undefined }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
        const memory = new MemoryRunRegistry();
        const shared = new RedisRunRegistry({ redis: redis as Redis, prefix: uniquePrefix('registry-prop') });
        const postgres = postgresRegistry(db);
        for (const registry of [memory, shared, postgres])
          await registry.create(queuedRecord('p', request, 7));
        for (const step of ops) {
          const [a, b, c] =
            step.kind === 'start'
              ? [
                  await memory.start('p', step.at, step.from),
                  await shared.start('p', step.at, step.from),
                  await postgres.start('p', step.at, step.from),
                ]
              : [
                  await memory.update('p', { status: step.status, steps: step.steps }, step.from),
                  await shared.update('p', { status: step.status, steps: step.steps }, step.from),
                  await postgres.update('p', { status: step.status, steps: step.steps }, step.from),
                ];
          expect(b).toEqual(a);
          expect(c).toEqual(a);
        }
        expect(await shared.get('p')).toEqual(await memory.get('p'));
        expect(await postgres.get('p')).toEqual(await memory.get('p'));
      }),
      { numRuns: 60, seed: 20261203 },
    );
  });
});
