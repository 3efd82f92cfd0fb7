import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunRegistry } from '../src/pgboss/postgres-run-registry.js';
import { PostgresTenantLimiter } from '../src/pgboss/postgres-tenant-limiter.js';
import { actor, fleet, sleep } from './review/pgboss-review-support.js';
import { uniqueTable } from './support/pg-tables.js';
import { connectTestPostgres } from './support/postgres.js';

// Per-tenant limits on pg-boss (pg-boss 10 has no groups): PostgresTenantLimiter, asked by each
// worker before a run starts; a refused job is queued again for later.

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

async function limiterOn(
  db: pg.Pool,
  limits: ConstructorParameters<typeof PostgresTenantLimiter>[0]['limits'],
  leaseMs = 60_000,
) {
  const registry = new PostgresRunRegistry({ pool: db, schema: 'reins_test', table: uniqueTable('tl') });
  await registry.ensureSchema();
  return new PostgresTenantLimiter({ pool: db, tables: registry.tables, limits, leaseMs });
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('pg-boss: per-tenant limits', () => {
  it('of 24 admissions at once for one tenant with 3 slots, exactly 3 are let in; a released slot is taken again', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const limiter = await limiterOn(pool, { maxRunning: 3 });
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => limiter.admit('acme', `r${i}`, 1_000)),
    );
    const admitted = answers.flatMap((answer, i) => (answer.ok ? [`r${i}`] : []));
    expect(admitted).toHaveLength(3);
    expect(
      answers.filter((answer) => !answer.ok).every((answer) => !answer.ok && answer.reason === 'concurrency'),
    ).toBe(true);
    // A holder asking again keeps its slot; another tenant is not held back.
    expect(await limiter.admit('acme', admitted[0] as string, 1_001)).toEqual({ ok: true });
    expect(await limiter.admit('globex', 'g1', 1_001)).toEqual({ ok: true });
    await limiter.release('acme', admitted[0] as string);
    expect(await limiter.admit('acme', 'late', 1_002)).toEqual({ ok: true });
    expect((await limiter.admit('acme', 'later', 1_002)).ok).toBe(false);
  });

  it('a slot its holder stopped renewing (the worker died) frees itself after the lease; renewing keeps it', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const limiter = await limiterOn(pool, { maxRunning: 1 }, 1_000);
    expect(await limiter.admit('acme', 'dead', 10_000)).toEqual({ ok: true });
    expect((await limiter.admit('acme', 'next', 10_500)).ok).toBe(false);
    await limiter.renew('acme', 'dead', 10_900);
    expect((await limiter.admit('acme', 'next', 11_500)).ok).toBe(false);
    expect(await limiter.admit('acme', 'next', 11_900)).toEqual({ ok: true });
  });

  it('a start rate: past max starts in a window the answer says how long until the window ends', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const limiter = await limiterOn(pool, { rate: { max: 2, windowMs: 1_000 } });
    expect(await limiter.admit('acme', 'a', 5_000)).toEqual({ ok: true });
    expect(await limiter.admit('acme', 'b', 5_100)).toEqual({ ok: true });
    expect(await limiter.admit('acme', 'c', 5_400)).toEqual({ ok: false, reason: 'rate', retryInMs: 600 });
    expect(await limiter.admit('globex', 'g', 5_400)).toEqual({ ok: true });
    expect(await limiter.admit('acme', 'c', 6_000)).toEqual({ ok: true });
  });

  it('two workers hold a tenant to one run at a time while another tenant runs beside it; every run answers and every job is settled', {
    timeout: 60_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    let overlapped = false;
    const f = await fleet({
      agent: {
        steps: 4,
        // Counted from the run's first model call to its last.
        beforeStep: async (step, { request }) => {
          const tenant = request.tenant ?? request.actor.id;
          if (step === 4) running.set(tenant, (running.get(tenant) ?? 0) - 1);
          if (step !== 1) return;
          running.set(tenant, (running.get(tenant) ?? 0) + 1);
          most.set(tenant, Math.max(most.get(tenant) ?? 0, running.get(tenant) ?? 0));
          if ((running.get('acme') ?? 0) > 0 && (running.get('globex') ?? 0) > 0) overlapped = true;
          await sleep(60);
        },
      },
      workers: 2,
      worker: { tenants: { maxRunning: 1 }, tenantRetryMs: 30, pollingIntervalSeconds: 0.2 },
    });
    try {
      const ids = ['a1', 'a2', 'a3', 'a4', 'g1', 'g2'];
      for (const runId of ids)
        await f.queue.enqueue({
          agent: 'steps',
          input: 'go',
          actor,
          runId,
          tenant: runId.startsWith('a') ? 'acme' : 'globex',
        });
      for (const runId of ids) expect((await f.settled(runId, 30_000)).outcome?.kind, runId).toBe('answered');
      expect(most.get('acme')).toBe(1);
      expect(most.get('globex')).toBe(1);
      expect(overlapped).toBe(true);
      // Refused jobs were queued again (completed as 'later'); nothing is left waiting or active, and
      // no slot is held. (A worker frees the slot and completes the job just after the record ends.)
      const db = pool;
      const leftover = async () => ({
        jobs: (
          await db.query<{ state: string; n: number }>(
            `SELECT state, count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed' GROUP BY state`,
            [f.queue.queueName],
          )
        ).rows,
        slots: (await db.query(`SELECT * FROM ${f.queue.registry.tables.tenantRunning}`)).rows,
      });
      let left = await leftover();
      for (let i = 0; i < 250 && (left.jobs.length > 0 || left.slots.length > 0); i++) {
        await sleep(20);
        left = await leftover();
      }
      expect(left).toEqual({ jobs: [], slots: [] });
      expect(f.effects.filter((key) => key.startsWith('a1:'))).toEqual(['a1:1', 'a1:2', 'a1:3']);
    } finally {
      await f.close();
    }
  });
});

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
  'pg-boss: a resumed run keeps its priority',
  () => {
    it('the resume job a verdict sends has the priority the run was queued with (it had none)', {
      timeout: 30_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const f = await fleet({ agent: { confirmStep: 2 }, worker: { pollingIntervalSeconds: 0.2 } });
      try {
        await f.queue.enqueue({
          agent: 'steps',
          input: 'go',
          actor: { id: 'ana', scopes: ['refunds'] },
          runId: 'urgent',
          priority: 3,
        });
        const parked = await f.settled('urgent');
        expect(parked.status).toBe('awaiting_approval');
        const approvalId = parked.pendingApprovals?.[0]?.approvalId as string;
        expect(
          await f.queue.submitVerdicts('urgent', [{ approvalId, decision: 'approve', by: 'lead' }]),
        ).toEqual({
          ok: true,
        });
        const { rows } = await pool.query<{ priority: number; resume: boolean }>(
          `SELECT priority, data ? 'verdicts' AS resume FROM pgboss.job WHERE name = $1 ORDER BY created_on`,
          [f.queue.queueName],
        );
        // reins's priority 3 is pg-boss's -3 (pg-boss runs higher first), on the first job and the resume.
        expect(rows).toEqual([
          { priority: -3, resume: false },
          { priority: -3, resume: true },
        ]);
        expect((await f.settled('urgent')).outcome?.kind).toBe('answered');
      } finally {
        await f.close();
      }
    });
  },
);
