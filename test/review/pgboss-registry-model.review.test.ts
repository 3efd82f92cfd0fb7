import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunRegistry } from '../../src/pgboss/postgres-run-registry.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import type { RunRecordStatus } from '../../src/queue/run-queue.js';
import { queuedRecord, type RunRecordPatch } from '../../src/queue/run-stores.js';
import { uniqueTable } from '../support/pg-tables.js';
import { connectTestPostgres } from '../support/postgres.js';

// A model test: the same random sequence of creates, updates, starts, gets and lists over several
// runs and two actors, on MemoryRunRegistry and PostgresRunRegistry; every answer must agree.

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const statuses: RunRecordStatus[] = ['queued', 'running', 'awaiting_approval', 'cancelling', 'ended'];
const runIds = ['r0', 'r1', 'r2', 'r3'];
const actors = ['ana', 'bob'];

function operations() {
  const patch = fc.record(
    {
      status: fc.constantFrom(...statuses),
      steps: fc.nat(20),
      updatedAt: fc.nat(100),
      outcome: fc.record({ kind: fc.constant('answered' as const), text: fc.string({ maxLength: 8 }) }),
      pendingApprovals: fc.constant(undefined),
    },
    { requiredKeys: [] },
  ) as fc.Arbitrary<RunRecordPatch>;
  return fc.oneof(
    fc.record({
      kind: fc.constant('create' as const),
      runId: fc.constantFrom(...runIds),
      actor: fc.constantFrom(...actors),
      at: fc.nat(3),
    }),
    fc.record({
      kind: fc.constant('update' as const),
      runId: fc.constantFrom(...runIds),
      patch,
      from: fc.option(fc.subarray(statuses), { nil: undefined }),
    }),
    fc.record({
      kind: fc.constant('start' as const),
      runId: fc.constantFrom(...runIds),
      at: fc.nat(100),
      from: fc.subarray(statuses),
    }),
    fc.record({ kind: fc.constant('get' as const), runId: fc.constantFrom(...runIds) }),
    fc.record({
      kind: fc.constant('list' as const),
      actor: fc.constantFrom(...actors),
      limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    }),
  );
}

type Op = ReturnType<typeof operations> extends fc.Arbitrary<infer T> ? T : never;

async function apply(registry: MemoryRunRegistry | PostgresRunRegistry, op: Op): Promise<unknown> {
  switch (op.kind) {
    case 'create': {
      const request = { agent: 'steps', input: 'go', actor: { id: op.actor } };
      return registry.create(queuedRecord(op.runId, request, op.at));
    }
    case 'update':
      return registry.update(op.runId, op.patch, op.from);
    case 'start':
      return registry.start(op.runId, op.at, op.from);
    case 'get':
      return registry.get(op.runId);
    case 'list':
      return registry.list({ actorId: op.actor, ...(op.limit === undefined ? {} : { limit: op.limit }) });
  }
}

async function agree(db: pg.Pool, seed: number) {
  await fc.assert(
    fc.asyncProperty(fc.array(operations(), { maxLength: 16 }), async (ops) => {
      const memory = new MemoryRunRegistry();
      const postgres = new PostgresRunRegistry({
        pool: db,
        schema: 'reins_test',
        table: uniqueTable('model'),
      });
      for (const [index, op] of ops.entries()) {
        const expected = await apply(memory, op);
        const actual = await apply(postgres, op);
        expect(actual, `op ${index}: ${JSON.stringify(op)}`).toEqual(expected);
      }
      await db.query(
        `DROP TABLE IF EXISTS ${postgres.tables.runs}, ${postgres.tables.events}, ${postgres.tables.ended}`,
      );
    }),
    { numRuns: 150, seed },
  );
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
  'review: PostgresRunRegistry against MemoryRunRegistry',
  () => {
    it('held: creates, updates (status, figures, outcome, pendingApprovals removal), starts, gets and lists agree', {
      timeout: 120_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      await agree(pool, 4242);
    });

    it('fixed: a patch of actorId or createdAt changes the record but not the columns list() scopes and orders by', async ({
      skip,
    }) => {
      if (!pool) return skip();
      const answers = [];
      for (const registry of [
        new MemoryRunRegistry(),
        new PostgresRunRegistry({ pool, schema: 'reins_test', table: uniqueTable('own') }),
      ]) {
        await registry.create(queuedRecord('r0', { agent: 'steps', input: 'go', actor: { id: 'ana' } }, 1));
        await registry.create(queuedRecord('r1', { agent: 'steps', input: 'go', actor: { id: 'ana' } }, 2));
        await registry.update('r0', { actorId: 'bob' });
        await registry.update('r1', { createdAt: 0 });
        answers.push({
          ana: (await registry.list({ actorId: 'ana' })).map((r) => `${r.runId}:${r.actorId}`),
          bob: (await registry.list({ actorId: 'bob' })).map((r) => `${r.runId}:${r.actorId}`),
        });
      }
      // Memory: { ana: ['r1:ana'], bob: ['r0:bob'] }. PostgreSQL lists r0 (now bob's) under ana, not bob.
      expect(answers[1]).toEqual(answers[0]);
    });
  },
);
