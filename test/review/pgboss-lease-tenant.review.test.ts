// From an adversarial review of the pg-boss tenant limits (a helper attacking a scratch clone).
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestPostgres } from '../support/postgres.js';
import { actor, fleet, sleep } from './pgboss-review-support.js';

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

describe('review: tenant slots vs lease takeover', () => {
  it('fixed: maxRunning 1: the lapsed execution of run A released the slot the taking-over execution held, so B ran beside A (slots now have an owner)', {
    timeout: 60_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    let releaseFirst: (() => void) | undefined;
    const first = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let releaseSecond: (() => void) | undefined;
    const second = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    const f = await fleet({
      agent: {
        steps: 4,
        beforeStep: (step, { runId, attempt }) =>
          runId === 'a' && attempt === 1 && step === 2
            ? first
            : runId === 'a' && attempt === 2 && step === 3
              ? second
              : undefined,
      },
      worker: { pollingIntervalSeconds: 0.2, tenants: { maxRunning: 1 } },
    });
    try {
      await f.queue.enqueue({ agent: 'steps', input: 'go', actor, tenant: 't', runId: 'a' });
      for (let i = 0; i < 250 && !f.effects.includes('a:1'); i++) await sleep(20);
      const { rows } = await pool.query<{ id: string }>('SELECT id FROM pgboss.job WHERE name = $1', [
        f.queue.queueName,
      ]);
      // What maintenance does to a job whose lease lapsed (as test/pgboss-lease.test.ts does).
      await f.queue.boss.fail(f.queue.queueName, rows[0]?.id as string);
      for (let i = 0; i < 250 && !f.effects.includes('a:2'); i++) await sleep(20);
      expect(f.effects).toContain('a:2');
      // The first execution wakes, finds the run held elsewhere and stops: its finally releases (t, a).
      releaseFirst?.();
      await sleep(1_000);
      const slots = await pool.query(`SELECT run_id FROM reins_test."${f.table}_tslots"`);
      expect(slots.rows).toEqual([{ run_id: 'a' }]);
      // A still runs (attempt 2, parked before step 3). B is the same tenant: maxRunning 1 must hold it.
      await f.queue.enqueue({ agent: 'steps', input: 'go', actor, tenant: 't', runId: 'b' });
      await sleep(2_000);
      const b = await f.queue.registry.get('b');
      expect(f.effects.filter((e) => e.startsWith('b:'))).toEqual([]);
      expect(b?.status).toBe('queued');
    } finally {
      releaseFirst?.();
      releaseSecond?.();
      await f.close();
    }
  });

  it('fixed: a tenant name PostgreSQL cannot index: the run neither ran nor failed, its job was re-sent forever (tenants are stored hashed)', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const f = await fleet({ worker: { pollingIntervalSeconds: 0.2, tenants: { maxRunning: 2 } } });
    try {
      // Random (incompressible) 6000 chars: above btree's 2704-byte index row limit.
      let tenant = '';
      while (tenant.length < 6_000) tenant += Math.random().toString(36).slice(2);
      await f.queue.enqueue({ agent: 'steps', input: 'go', actor, tenant, runId: 'huge' });
      await sleep(4_000);
      const record = await f.queue.registry.get('huge');
      const { rows } = await pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1',
        [f.queue.queueName],
      );
      expect(rows[0]?.n).toBe(1);
      // Expect: the run ends (hard_error) or runs; not a silent re-send loop.
      expect(record?.status).toBe('ended');
    } finally {
      await f.close();
    }
  });
});
