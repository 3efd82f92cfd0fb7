import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, fleet, sleep } from './review/pgboss-review-support.js';
import { connectTestPostgres } from './support/postgres.js';

// pg-boss 10 has no heartbeat, and its work() races each handler against the job's expireInSeconds:
// a run longer than that was handed out again while it still ran, and a dead worker's run waited out
// the whole expiry (900 s by default). reins's worker renews the lease of the job it runs and settles
// a job only while it is still its own. Tests with leases of a second and maintenance every second.

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

async function jobsOf(db: pg.Pool, queueName: string) {
  const { rows } = await db.query<{ id: string; state: string; retry_count: number }>(
    'SELECT id, state, retry_count FROM pgboss.job WHERE name = $1 ORDER BY created_on',
    [queueName],
  );
  return rows;
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('pg-boss worker: job leases', () => {
  it('a step far longer than the lease runs once: the worker renews the lease, maintenance never takes the job back', {
    timeout: 60_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const executions: string[] = [];
    const f = await fleet({
      // Step 2 takes 4 s against a 1 s lease, with maintenance every second.
      agent: { steps: 3, beforeStep: (step) => (step === 2 ? sleep(4_000) : undefined) },
      queue: { expireInSeconds: 1 },
      worker: {
        pollingIntervalSeconds: 0.2,
        maintenanceIntervalSeconds: 1,
        onExecuted: (_job, result) => void executions.push(result.kind),
      },
      workers: 2,
    });
    try {
      await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'long' });
      const record = await f.settled('long', 30_000);
      // Let any second execution that had been started show itself.
      await sleep(1_500);
      expect(record.outcome?.kind).toBe('answered');
      expect(record.attempts).toBe(1);
      expect(executions).toEqual(['ended']);
      expect(f.effects).toEqual(['long:1', 'long:2']);
      expect(await jobsOf(pool, f.queue.queueName)).toEqual([
        expect.objectContaining({ state: 'completed', retry_count: 0 }),
      ]);
    } finally {
      await f.close();
    }
  });

  it('an execution whose lease lapsed does not settle the job another execution now holds', {
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
    const executions: string[] = [];
    const f = await fleet({
      agent: {
        steps: 4,
        // The first execution waits before step 2; the one that takes the job over waits before step 3.
        beforeStep: (step, { attempt }) =>
          attempt === 1 && step === 2 ? first : attempt === 2 && step === 3 ? second : undefined,
      },
      worker: {
        pollingIntervalSeconds: 0.2,
        onExecuted: (_job, result) => void executions.push(result.kind),
      },
    });
    try {
      await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'taken' });
      for (let i = 0; i < 250 && !f.effects.includes('taken:1'); i++) await sleep(20);
      const [job] = await jobsOf(pool, f.queue.queueName);
      if (!job) throw new Error('no job');
      // What maintenance does to a job whose lease lapsed (a worker cut off from the database):
      // failed, to be handed out again (after its 1 s retry delay).
      await f.queue.boss.fail(f.queue.queueName, job.id);
      for (let i = 0; i < 250 && !f.effects.includes('taken:2'); i++) await sleep(20);
      expect(f.effects).toContain('taken:2');
      expect(await jobsOf(pool, f.queue.queueName)).toEqual([
        expect.objectContaining({ id: job.id, state: 'active', retry_count: 1 }),
      ]);
      // The first execution goes on, finds the run held by the second (its commit is refused), and
      // stops; it must leave the job to the execution that holds it.
      releaseFirst?.();
      for (let i = 0; i < 250 && executions.length === 0; i++) await sleep(20);
      await sleep(200);
      expect(executions).toEqual(['skipped']);
      expect(await jobsOf(pool, f.queue.queueName)).toEqual([
        expect.objectContaining({ id: job.id, state: 'active', retry_count: 1 }),
      ]);
      releaseSecond?.();
      const record = await f.settled('taken', 10_000);
      expect(record.outcome?.kind).toBe('answered');
      for (let i = 0; i < 100 && (await jobsOf(pool, f.queue.queueName))[0]?.state !== 'completed'; i++)
        await sleep(20);
      expect(await jobsOf(pool, f.queue.queueName)).toEqual([
        expect.objectContaining({ id: job.id, state: 'completed', retry_count: 1 }),
      ]);
      expect(f.effects).toEqual(['taken:1', 'taken:2', 'taken:3']);
    } finally {
      releaseFirst?.();
      releaseSecond?.();
      await f.close();
    }
  });
});
