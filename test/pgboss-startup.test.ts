import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../src/checkpoint/checkpoint-store.js';
import { createPgBossWorker } from '../src/pgboss/pgboss-run-worker.js';
import { retryingSetup } from '../src/pgboss/tables.js';
import { agentRegistry } from '../src/queue/agent-definition.js';
import { scriptedStepsAgent } from '../src/queue/scripted-steps-agent.js';
import { uniqueTable } from './support/pg-tables.js';
import { connectTestPostgres, postgresUrl } from './support/postgres.js';

// Eight `reins worker --engine pgboss` processes started at once on a new queue: one died on
// "deadlock detected" (pg-boss's first maintenance against another's queue creation) and, its pool
// still open, never exited, so the benchmark waiting for it hung.

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const conflict = (code: string) => Object.assign(new Error('deadlock detected'), { code });

describe('retryingSetup', () => {
  it('tries again after a deadlock or a serialization failure, not after any other error, and gives up after 6 tries', async () => {
    let calls = 0;
    expect(
      await retryingSetup(
        async () => {
          calls++;
          if (calls < 3) throw conflict(calls === 1 ? '40P01' : '40001');
          return 'started';
        },
        () => 0,
      ),
    ).toBe('started');
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      retryingSetup(async () => {
        calls++;
        throw conflict('42P01');
      }),
    ).rejects.toThrow('deadlock detected');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      retryingSetup(
        async () => {
          calls++;
          throw conflict('40P01');
        },
        () => 0,
      ),
    ).rejects.toThrow();
    expect(calls).toBe(6);
  });
});

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('pg-boss workers starting together', () => {
  it('eight workers started at once on a new queue, twice: every one starts (maintenance on)', {
    timeout: 90_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    for (let round = 0; round < 2; round++) {
      const table = uniqueTable('start');
      const workers = await Promise.all(
        Array.from({ length: 8 }, () =>
          createPgBossWorker({
            connectionString: postgresUrl,
            schema: 'reins_test',
            table,
            queueName: table,
            agents: agentRegistry([scriptedStepsAgent({ effect: () => {} })]),
            checkpoint: new MemoryCheckpointStore(),
            concurrency: 2,
            maintenanceIntervalSeconds: 1,
          }),
        ),
      );
      expect(workers).toHaveLength(8);
      await Promise.all(workers.map((worker) => worker.close()));
      await pool.query('DELETE FROM pgboss.job WHERE name = $1', [table]);
      await pool.query('SELECT pgboss.delete_queue($1)', [table]);
    }
  });
});
