import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CancelResult } from '../../src/queue/run-queue.js';
import { connectTestPostgres } from '../support/postgres.js';
import { actor, fleet, seqs, sleep } from './pgboss-review-support.js';

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
  'review: PgBossRunQueue races and ordering',
  () => {
    it('held: of 4 concurrent enqueues of one id, one is queued and one job exists (8 ids)', {
      timeout: 30_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const f = await fleet({ workers: 0 });
      try {
        for (let i = 0; i < 8; i++) {
          const answers = await Promise.all(
            Array.from({ length: 4 }, () =>
              f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: `dup-${i}` }),
            ),
          );
          expect(answers.filter((answer) => answer.ok)).toHaveLength(1);
        }
        expect(await f.queue.boss.getQueueSize(f.queue.queueName)).toBe(8);
      } finally {
        await f.close();
      }
    });

    it('held: a cancel racing the worker’s start of a queued run: ended means nothing ran and the run is cancelled; cancelling means it is cancelled unless it finished first', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const f = await fleet({ workers: 2 });
      try {
        const answers: [string, CancelResult][] = [];
        for (let i = 0; i < 30; i++) {
          const runId = `race-${i}`;
          await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId });
          await sleep(i % 10);
          answers.push([runId, await f.queue.cancel(runId, 'ana')]);
        }
        for (const [runId, answer] of answers) {
          const record = await f.settled(runId);
          const effects = f.effects.filter((key) => key.startsWith(`${runId}:`));
          if (!answer.ok) expect(record.outcome?.kind, runId).toBe('answered');
          else if (answer.status === 'ended') expect(record.outcome?.kind, runId).toBe('cancelled');
          // `cancelling` is a request to the worker holding the run: a 0-latency run can finish
          // before the notification reaches it, and then it answered (seen once in CI under load).
          else expect(['cancelled', 'answered'], runId).toContain(record.outcome?.kind);
          if (answer.ok && answer.status === 'ended') expect(effects, runId).toEqual([]);
          const trace = await f.queue.events.read(runId, -1);
          expect(seqs(trace), runId).toEqual(trace.map((_, index) => index));
        }
      } finally {
        await f.close();
      }
    });

    it('held: a verdict racing a cancel of a parked run: an acknowledged cancel is final and the approved call never runs after an `ended` answer', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const f = await fleet({ agent: { confirmStep: 2 }, workers: 1 });
      try {
        for (let i = 0; i < 8; i++) {
          const runId = `vc-${i}`;
          await f.queue.enqueue({
            agent: 'steps',
            input: 'go',
            actor: { id: 'ana', scopes: ['refunds'] },
            runId,
          });
          const parked = await f.settled(runId);
          expect(parked.status).toBe('awaiting_approval');
          const approvalId = parked.pendingApprovals?.[0]?.approvalId as string;
          const verdict = f.queue.submitVerdicts(runId, [{ approvalId, decision: 'approve', by: 'lead' }]);
          if (i % 2 === 1) await sleep(i);
          const [, cancelled] = await Promise.all([verdict, f.queue.cancel(runId, 'ana')]);
          let record = await f.settled(runId);
          for (let n = 0; n < 100 && record.status !== 'ended'; n++) {
            await sleep(20);
            record = await f.settled(runId);
          }
          const effects = f.effects.filter((key) => key.startsWith(`${runId}:`));
          // 'ended': cancelled, and the approved call never ran. 'cancelling': the worker holding the
          // run aborts it, unless the run (0-latency here) finished before the notification reached
          // it, as the cancel racing a start below (and on BullMQ).
          if (cancelled.ok && cancelled.status === 'ended') {
            expect(record.outcome?.kind, runId).toBe('cancelled');
            expect(effects, runId).toEqual([`${runId}:1`]);
          }
          if (cancelled.ok && cancelled.status === 'cancelling')
            expect(['cancelled', 'answered'], runId).toContain(record.outcome?.kind);
        }
      } finally {
        await f.close();
      }
    });

    it('held: priority as BullMQ: no priority first (in order), then 1, 2, 3', {
      timeout: 30_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const order: string[] = [];
      const f = await fleet({
        agent: { steps: 1, beforeStep: (_step, { runId }) => void order.push(runId) },
        workers: 0,
      });
      try {
        for (const [runId, priority] of [
          ['p3', 3],
          ['n1', 0],
          ['p1', 1],
          ['p2', 2],
          ['n2', undefined],
        ] as const)
          await f.queue.enqueue({
            agent: 'steps',
            input: 'go',
            actor,
            runId,
            ...(priority === undefined ? {} : { priority }),
          });
        await f.start({ concurrency: 1 });
        for (const runId of ['p3', 'n1', 'p1', 'p2', 'n2']) await f.settled(runId);
        expect(order).toEqual(['n1', 'n2', 'p1', 'p2', 'p3']);
      } finally {
        await f.close();
      }
    });

    it('fixed: a run drained by close() is queued again without its priority: it jumps ahead of higher-priority runs', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      let release: (() => void) | undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let held = true;
      const firstSteps: string[] = [];
      let second = false;
      const f = await fleet({
        agent: {
          steps: 3,
          beforeStep: (step, { runId }) => {
            if (second && !firstSteps.includes(runId)) firstSteps.push(runId);
            return held && runId === 'low' && step === 2 ? gate : undefined;
          },
        },
        workers: 0,
      });
      try {
        const first = await f.start({ concurrency: 1 });
        await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'low', priority: 5 });
        while (!f.effects.includes('low:1')) await sleep(10);
        // Queued behind the held run on a full worker: priority 1, ahead of 'low' (5).
        await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'urgent', priority: 1 });
        const closing = first.close();
        held = false;
        release?.();
        await closing;
        second = true;
        await f.start({ concurrency: 1 });
        await f.settled('low');
        await f.settled('urgent');
        // BullMQ's drain (moveToDelayed) keeps the job's priority: 'urgent' goes first.
        expect(firstSteps).toEqual(['urgent', 'low']);
      } finally {
        release?.();
        await f.close();
      }
    });

    it('fixed: a backlog drains one run per work loop per pollingIntervalSeconds, however short the runs', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const f = await fleet({ agent: { steps: 1 }, workers: 0 });
      try {
        // Queued while no worker ran (a deploy, a burst larger than the fleet's concurrency).
        for (let i = 0; i < 6; i++)
          await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: `b${i}` });
        const startedAt = Date.now();
        await f.start({ concurrency: 1 });
        for (let i = 0; i < 6; i++) await f.settled(`b${i}`);
        // Each run takes milliseconds, but pg-boss's loop sleeps out the rest of its 2 s interval after
        // every job (worker.js: no re-fetch after a job), and only a new send notifies it.
        expect(Date.now() - startedAt).toBeLessThan(3_000);
      } finally {
        await f.close();
      }
    });

    it('fixed (on pg-boss; BullMQ still as before): a verdict checked against one pause is accepted after the run moved on to another pause (the compare-and-set is on status only)', {
      timeout: 30_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const f = await fleet({ workers: 0 });
      try {
        await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'two-pauses' });
        const pause = (approvalId: string) =>
          [{ approvalId, callId: approvalId, tool: 'confirmed_effect', input: {} }] as never;
        await f.queue.registry.update('two-pauses', {
          status: 'awaiting_approval',
          pendingApprovals: pause('first'),
        });
        // Between submitVerdicts' read (and check) and its compare-and-set, another person's verdict
        // resumed the run and it paused again, at a second approval.
        const registry = f.queue.registry;
        const read = registry.get.bind(registry);
        registry.get = async (runId: string) => {
          const record = await read(runId);
          await registry.update(runId, { status: 'queued' }, ['awaiting_approval']);
          await registry.update(runId, { status: 'awaiting_approval', pendingApprovals: pause('second') });
          return record;
        };
        const answer = await f.queue.submitVerdicts('two-pauses', [
          { approvalId: 'first', decision: 'approve' },
        ]);
        registry.get = read;
        expect(answer).toMatchObject({ ok: false });
        expect((await registry.get('two-pauses'))?.status).toBe('awaiting_approval');
      } finally {
        await f.close();
      }
    });
  },
);
