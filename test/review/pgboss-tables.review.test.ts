import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunEventLog } from '../../src/pgboss/postgres-run-event-log.js';
import { PostgresRunRegistry } from '../../src/pgboss/postgres-run-registry.js';
import { runTables } from '../../src/pgboss/tables.js';
import { queuedRecord } from '../../src/queue/run-stores.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { uniqueTable } from '../support/pg-tables.js';
import { connectTestPostgres } from '../support/postgres.js';
import { actor, fleet } from './pgboss-review-support.js';

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
const event = (runId: string, seq: number) =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1 }) as unknown as TraceEvent;

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('review: table and schema names', () => {
  it('fixed: a schema and table each within the documented 50 characters make every append fail (channel name too long for pg_notify)', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    // 'reins_test' (10) + a 50-character table: runTables accepts both; the events channel
    // '<schema>.<table>.events' is 68 bytes, over PostgreSQL's 63 for a channel name.
    const table = uniqueTable('long').padEnd(50, 'x');
    expect(() => runTables(table, 'reins_test')).not.toThrow();
    const log = new PostgresRunEventLog({ pool, schema: 'reins_test', table });
    try {
      await expect(log.append('r', [event('r', 0)])).resolves.toBeUndefined();
      await expect(log.end('r')).resolves.toBeUndefined();
    } finally {
      await log.close();
    }
  });

  it('fixed: the same names make PgBossRunQueue.enqueue throw (the jobs channel) after the table accepted the id', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const table = uniqueTable('longq').padEnd(50, 'y');
    const f = await fleet({ table, workers: 0 });
    try {
      const first = await f.queue
        .enqueue({ agent: 'steps', input: 'go', actor, runId: 'long' })
        .catch(String);
      expect(first).toEqual({ ok: true, runId: 'long' });
    } finally {
      await f.close();
    }
  });

  it('fixed: two stores first used at once on fresh tables (two processes starting, or a follow beside an enqueue) fail their CREATE ... IF NOT EXISTS', {
    timeout: 60_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const failures: string[] = [];
    for (let round = 0; round < 10; round++) {
      const table = uniqueTable('race');
      // Odd rounds on a fresh schema too (a first deployment, every process starting on nothing).
      const schema = round % 2 === 0 ? 'reins_test' : `reins_race_${round}_${process.pid}`;
      const registry = new PostgresRunRegistry({ pool, schema, table });
      const log = new PostgresRunEventLog({ pool, schema, table });
      const settled = await Promise.allSettled([
        registry.create(queuedRecord('r', request, 1)),
        log.read('r', -1),
        new PostgresRunRegistry({ pool, schema, table }).get('r'),
      ]);
      for (const s of settled) if (s.status === 'rejected') failures.push(String(s.reason).slice(0, 90));
      await log.close();
      if (schema === 'reins_test')
        await pool.query(
          `DROP TABLE IF EXISTS ${schema}.${table}, ${schema}.${table}_events, ${schema}.${table}_ended`,
        );
      else await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
    expect([...new Set(failures)]).toEqual([]);
  });

  it('fixed: a table name that is a reserved word passes the identifier check and fails at first use with a syntax error', async ({
    skip,
  }) => {
    if (!pool) return skip();
    // Identifiers are put in SQL unquoted: 'order' is accepted by runTables, and 'Runs' is folded
    // to 'runs' in SQL while the channels keep 'Runs'.
    // (Schema-qualified, 'reins_test.order' parses: PostgreSQL takes any keyword after a dot.)
    let constructed: unknown;
    try {
      constructed = new PostgresRunRegistry({ pool, table: 'order' });
    } catch (error) {
      constructed = error;
    }
    try {
      if (constructed instanceof PostgresRunRegistry)
        await expect(constructed.get('x')).resolves.toBeUndefined();
      else expect((constructed as { reason?: string }).reason).toBe('invalid_config');
    } finally {
      await pool.query('DROP TABLE IF EXISTS "order", order_events, order_ended');
    }
  });
});
