import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBossRunQueue } from '../src/pgboss/pgboss-run-queue.js';
import { PostgresIdempotencyStore } from '../src/postgres/postgres-idempotency-store.js';
import { randomInt, seededRandom } from '../src/testing/seeded-random.js';
import { dropBossQueue, uniqueTable } from './support/pg-tables.js';
import { connectTestPostgres, postgresUrl } from './support/postgres.js';

// 60 runs of 6 steps on 3 pg-boss worker processes and nothing but PostgreSQL; about one run in six
// SIGKILLs its worker on its first attempt at a seeded step and point (before the model call,
// before or after the effect), taking the worker's other runs down with it. pg-boss's maintenance
// hands the dead worker's expired jobs (2 s) to the others, which resume from the shared
// PostgreSQL checkpoints.
const workerScript = fileURLToPath(new URL('./fixtures/pgboss-crash-worker.mjs', import.meta.url));
const built = fileURLToPath(new URL('../dist/pgboss/index.js', import.meta.url));
const runs = 60;
const steps = 6;
const points = ['before-model', 'before-effect', 'after-effect'] as const;

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
  'pg-boss: 60 queued runs, 3 worker processes, SIGKILLs',
  () => {
    it('every run ends answered; 0 lost, 0 duplicated effects; every trace has no gap and no duplicate seq', {
      timeout: 150_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      expect(existsSync(built), 'run `npm run build` first (npm test does)').toBe(true);
      const db = pool;
      const table = uniqueTable('crash');
      await db.query('CREATE SCHEMA IF NOT EXISTS reins_test');
      await db.query(`CREATE TABLE reins_test.${table}_effects (key text PRIMARY KEY, n integer NOT NULL)`);
      await new PostgresIdempotencyStore({ pool: db, table: `${table}_idem` }).migrate();
      const random = seededRandom(20261204);
      const ids = Array.from({ length: runs }, (_, i) => `${table}-${i}`);
      const plan: Record<string, { step: number; point: (typeof points)[number] }> = {};
      for (const id of ids)
        if (random() < 1 / 6)
          plan[id] = { step: randomInt(random, 1, steps - 1), point: points[randomInt(random, 0, 2)]! };
      const env = {
        ...process.env,
        PGBOSS_TEST_URL: postgresUrl,
        PGBOSS_TEST_TABLE: table,
        PGBOSS_TEST_CRASH_PLAN: JSON.stringify(plan),
      };
      const workers = new Set<ChildProcess>();
      let kills = 0;
      let done = false;
      const start = () =>
        new Promise<void>((ready, failed) => {
          const child = spawn(process.execPath, [workerScript], {
            env,
            stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
          });
          let stderr = '';
          child.stderr?.on('data', (chunk) => {
            stderr += String(chunk);
          });
          workers.add(child);
          child.on('message', () => ready());
          child.on('exit', (code, signal) => {
            workers.delete(child);
            if (signal === 'SIGKILL') {
              kills++;
              if (!done) void start();
            } else if (!done) failed(new Error(`worker exited ${code ?? signal}: ${stderr}`));
          });
        });
      // One worker first: it makes pg-boss's schema and the run tables, then the others join.
      await start();
      await Promise.all([start(), start()]);
      const queue = new PgBossRunQueue({
        connectionString: postgresUrl,
        schema: 'reins_test',
        table,
        queueName: table,
        expireInSeconds: 2,
      });
      const startedAt = Date.now();
      for (const runId of ids)
        await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId });
      const deadline = startedAt + 110_000;
      let records = await Promise.all(ids.map((id) => queue.registry.get(id)));
      while (Date.now() < deadline && records.some((record) => record?.status !== 'ended')) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        records = await Promise.all(ids.map((id) => queue.registry.get(id)));
      }
      const wallMs = Date.now() - startedAt;
      done = true;
      const exits = [...workers].map((child) => new Promise((resolve) => child.once('exit', resolve)));
      for (const child of workers) child.kill('SIGTERM');
      const stopping = setTimeout(() => {
        for (const child of workers) child.kill('SIGKILL');
      }, 15_000);
      await Promise.all(exits);
      clearTimeout(stopping);
      const counted = await db.query<{ key: string; n: number }>(
        `SELECT key, n FROM reins_test.${table}_effects`,
      );
      const counts = new Map(counted.rows.map((row) => [row.key, row.n]));
      const traces = await Promise.all(ids.map((id) => queue.events.read(id, -1)));
      await dropBossQueue(queue);
      await queue.close();

      expect(
        records.filter((record) => record?.status !== 'ended').map((record) => record?.runId ?? 'missing'),
      ).toEqual([]);
      expect(records.filter((record) => record?.outcome?.kind !== 'answered').map((r) => r?.outcome)).toEqual(
        [],
      );
      const keys = ids.flatMap((id) => Array.from({ length: steps - 1 }, (_, step) => `${id}:${step + 1}`));
      expect(keys.filter((key) => (counts.get(key) ?? 0) > 1)).toEqual([]);
      expect(keys.filter((key) => (counts.get(key) ?? 0) === 0)).toEqual([]);
      for (const trace of traces) {
        expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
        expect(trace.at(-1)?.type).toBe('run-end');
      }
      // The crashes happened and were recovered from.
      const planned = Object.keys(plan).length;
      expect(kills).toBeGreaterThanOrEqual(Math.min(3, planned / 4));
      const resumed = records.filter((record) => (record?.attempts ?? 0) > 1).length;
      expect(resumed).toBeGreaterThanOrEqual(planned / 2);
      console.log(
        `pg-boss: ${runs} runs, ${kills} SIGKILLs, ${resumed} resumed, ${planned} planned crashes, ${(wallMs / 1000).toFixed(1)} s`,
      );
    });
  },
);
