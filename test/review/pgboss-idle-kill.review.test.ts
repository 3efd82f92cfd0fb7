import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTable } from '../support/pg-tables.js';
import { connectTestPostgres, postgresUrl } from '../support/postgres.js';

// The pools reins makes from `connectionString` (poolFor, src/pgboss/pgboss-connection.ts:36) have
// no 'error' listener. pg-pool re-emits an idle client's error on the pool, and an EventEmitter
// 'error' without a listener throws: a PostgreSQL restart, a failover or pg_terminate_backend of an
// idle pooled connection kills the service or worker process with an uncaught exception.

const script = fileURLToPath(new URL('./fixtures/pgboss-idle-kill.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../dist/pgboss/index.js', import.meta.url));

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

async function survives(kind: 'queue' | 'worker'): Promise<{ survived: boolean; stderr: string }> {
  const db = pool as pg.Pool;
  const table = uniqueTable(`idle_${kind}`);
  const url = `${postgresUrl}${postgresUrl.includes('?') ? '&' : '?'}application_name=${table}`;
  const child: ChildProcess = spawn(process.execPath, [script, kind, url, table], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 300 && !stdout.includes('ready'); i++) await new Promise((r) => setTimeout(r, 50));
  expect(stdout, stderr).toContain('ready');
  // What a PostgreSQL restart does to every connection of the process.
  await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
    table,
  ]);
  await new Promise((r) => setTimeout(r, 1_000));
  child.stdin?.write('close\n');
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
  if (code === 'timeout') child.kill('SIGKILL');
  const thrown = stderr
    .split('\n')
    .filter(
      (line) =>
        /^(error|Error|Emitted| {4}at BoundPool| {4}at Client)/.test(line.trim()) || line.includes('Emitted'),
    )
    .slice(0, 3)
    .join(' | ');
  return { survived: stdout.includes('survived'), stderr: thrown };
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
  'review: the process across a PostgreSQL restart',
  () => {
    it('fixed: a PgBossRunQueue process dies when its idle pooled connections are terminated', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      expect(existsSync(built), 'run `npm run build` first').toBe(true);
      expect(await survives('queue')).toEqual({ survived: true, stderr: '' });
    });

    it('fixed: a pg-boss worker process dies when its idle pooled connections are terminated', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      expect(existsSync(built), 'run `npm run build` first').toBe(true);
      expect(await survives('worker')).toEqual({ survived: true, stderr: '' });
    });
  },
);
