import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropBossQueue, uniqueTable } from '../../test/support/pg-tables.js';
import { connectTestPostgres, postgresUrl } from '../../test/support/postgres.js';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { MemoryIdempotencyStore } from '../idempotency/memory-store.js';
import { agentRegistry } from '../queue/agent-definition.js';
import type { RunRecord } from '../queue/run-queue.js';
import { type ScriptedStepsAgentOptions, scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import type { TraceEvent } from '../trace/events.js';
import { PgBossRunQueue } from './pgboss-run-queue.js';
import { createPgBossWorker, type PgBossWorker, type PgBossWorkerOptions } from './pgboss-run-worker.js';

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const actor = { id: 'ana' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A queue and its workers on fresh tables and a fresh pg-boss queue; closes everything at the end. */
async function fleet(
  agent: Partial<ScriptedStepsAgentOptions> = {},
  workers = 1,
  worker: Partial<PgBossWorkerOptions> = {},
) {
  const table = uniqueTable('runs');
  const common = { connectionString: postgresUrl, schema: 'reins_test', table, queueName: table };
  const effects: string[] = [];
  const checkpoint = new MemoryCheckpointStore();
  const agents = agentRegistry([
    scriptedStepsAgent({
      steps: 4,
      effect: ({ key }) => void effects.push(key),
      idempotency: { store: new MemoryIdempotencyStore() },
      ...agent,
    }),
  ]);
  const queue = new PgBossRunQueue(common);
  const started: PgBossWorker[] = [];
  const start = async () => {
    const one = await createPgBossWorker({ ...common, agents, checkpoint, concurrency: 4, ...worker });
    started.push(one);
    return one;
  };
  for (let i = 0; i < workers; i++) await start();
  const settled = async (runId: string, timeoutMs = 20_000): Promise<RunRecord> => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const record = await queue.registry.get(runId);
      if (record?.status === 'ended' || record?.status === 'awaiting_approval') return record;
      await sleep(20);
    }
    throw new Error(`run ${runId} did not settle: ${JSON.stringify(await queue.registry.get(runId))}`);
  };
  const close = async () => {
    await Promise.all(started.map((one) => one.close()));
    await dropBossQueue(queue);
    await queue.close();
  };
  return { queue, effects, start, settled, close };
}

function expectContiguous(events: readonly TraceEvent[]) {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('PgBossRunQueue and its worker', () => {
  it('runs a queued run to its end; a second enqueue of the id is refused and queues nothing', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    // Idle loops poll every 10 minutes: a run that settles within settled()'s 20 s was picked up on
    // the notification sent with its job, not at a poll.
    const { queue, effects, settled, close } = await fleet({}, 1, { pollingIntervalSeconds: 600 });
    try {
      expect(await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'one' })).toEqual({
        ok: true,
        runId: 'one',
      });
      expect(await queue.enqueue({ agent: 'steps', input: 'again', actor, runId: 'one' })).toEqual({
        ok: false,
        reason: 'duplicate_run',
        runId: 'one',
      });
      const record = await settled('one');
      expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, attempts: 1, steps: 4 });
      expect(effects).toEqual(['one:1', 'one:2', 'one:3']);
      const trace = await queue.events.read('one', -1);
      expectContiguous(trace);
      expect(trace.at(-1)?.type).toBe('run-end');
      // One job only: the refused enqueue rolled back with its record. (The worker completes the job
      // just after the record ends: wait for that.)
      for (
        let i = 0;
        i < 250 && (await queue.boss.getQueueSize(queue.queueName, { before: 'completed' })) > 0;
        i++
      )
        await sleep(20);
      expect(await queue.boss.getQueueSize(queue.queueName, { before: 'completed' })).toBe(0);
      expect(await queue.boss.getQueueSize(queue.queueName)).toBe(0);
      expect((await queue.registry.list({ actorId: 'ana' })).map((r) => r.runId)).toEqual(['one']);
    } finally {
      await close();
    }
  });

  it('parks a run for approval; one of two concurrent verdicts resumes it on a worker; stale ids are refused', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const { queue, effects, settled, close } = await fleet({ confirmStep: 2 });
    try {
      await queue.enqueue({
        agent: 'steps',
        input: 'go',
        actor: { id: 'ana', scopes: ['refunds'] },
        runId: 'pay',
      });
      const parked = await settled('pay');
      expect(parked.status).toBe('awaiting_approval');
      const approvalId = parked.pendingApprovals?.[0]?.approvalId as string;
      expect(await queue.submitVerdicts('pay', [{ approvalId: 'nope', decision: 'approve' }])).toMatchObject({
        ok: false,
        reason: 'stale_approval',
      });
      const answers = await Promise.all([
        queue.submitVerdicts('pay', [{ approvalId, decision: 'approve', by: 'lead' }]),
        queue.submitVerdicts('pay', [{ approvalId, decision: 'approve', by: 'lead' }]),
      ]);
      expect(answers.filter((answer) => answer.ok)).toHaveLength(1);
      await sleep(50);
      const done = await settled('pay');
      expect(done).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, attempts: 2 });
      expect(effects).toEqual(['pay:1', 'pay:2', 'pay:3']);
      expectContiguous(await queue.events.read('pay', -1));
    } finally {
      await close();
    }
  });

  it('cancels a queued run (ended at once, its job skipped) and a running one (its signal, on the worker)', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { queue, effects, settled, close, start } = await fleet(
      { beforeStep: (step, { runId }) => (runId === 'slow' && step === 2 ? gate : undefined) },
      0,
    );
    try {
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'waiting' });
      expect(await queue.cancel('waiting', 'ana')).toEqual({ ok: true, status: 'ended' });
      await start();
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'slow' });
      while (!effects.includes('slow:1')) await sleep(10);
      expect(await queue.cancel('slow', 'ana')).toEqual({ ok: true, status: 'cancelling' });
      const record = await settled('slow');
      release?.();
      expect(record.outcome?.kind).toBe('cancelled');
      const waiting = await queue.registry.get('waiting');
      expect(waiting).toMatchObject({ status: 'ended', outcome: { kind: 'cancelled' }, attempts: 0 });
      expect(effects.filter((key) => key.startsWith('waiting'))).toEqual([]);
      expect(effects.filter((key) => key.startsWith('slow'))).toEqual(['slow:1']);
      expect(await queue.cancel('slow', 'ana')).toEqual({ ok: false, reason: 'already_ended' });
      expect(await queue.cancel('nobody', 'ana')).toEqual({ ok: false, reason: 'not_found' });
    } finally {
      release?.();
      await close();
    }
  });

  it('a follower of a queued run sees its whole trace live, with no gap and no duplicate seq', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const { queue, settled, close } = await fleet();
    try {
      const seen: TraceEvent[] = [];
      const stop = new AbortController();
      const following = (async () => {
        for await (const event of queue.events.follow('live', -1, stop.signal)) seen.push(event);
      })();
      await sleep(50);
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'live' });
      await settled('live');
      await Promise.race([following, sleep(5_000)]);
      stop.abort();
      await following;
      expectContiguous(seen);
      expect(seen.at(-1)?.type).toBe('run-end');
      expect(seen).toEqual(await queue.events.read('live', -1));
    } finally {
      await close();
    }
  });

  it('drains on close: the run in flight stops at a step boundary, is queued again and another worker finishes it, nothing twice', {
    timeout: 40_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = true;
    const { queue, effects, settled, close, start } = await fleet(
      { beforeStep: (step) => (held && step === 3 ? gate : undefined) },
      0,
    );
    try {
      const first = await start();
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'drained' });
      while (!effects.includes('drained:2')) await sleep(10);
      await start();
      // The run waits inside step 3 on the first worker; closing it drains the run after that step.
      const closing = first.close();
      held = false;
      release?.();
      await closing;
      const record = await settled('drained');
      expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, attempts: 2 });
      expect(effects).toEqual(['drained:1', 'drained:2', 'drained:3']);
      const trace = await queue.events.read('drained', -1);
      expectContiguous(trace);
      expect(trace.filter((event) => event.type === 'run-start')).toHaveLength(2);
    } finally {
      release?.();
      await close();
    }
  });

  it('a cancel sent while the worker’s listening connection is down reaches the run once it is back', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const db = pool;
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { queue, effects, settled, close } = await fleet({
      beforeStep: (step) => (step === 2 ? gate : undefined),
    });
    try {
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'held' });
      while (!effects.includes('held:1')) await sleep(10);
      // The worker's listening connection: the one whose last statement LISTENed on its channels.
      const listening = await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE $1`,
        [`%${queue.registry.tables.jobsChannel}%`],
      );
      expect(listening.rows).toHaveLength(1);
      await db.query('SELECT pg_terminate_backend($1)', [listening.rows[0]?.pid]);
      expect(await queue.cancel('held', 'ana')).toEqual({ ok: true, status: 'cancelling' });
      // Not released: without the cancel the run waits at step 2 until the end of the test.
      const record = await settled('held', 5_000);
      expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'cancelled' } });
      expect(effects).toEqual(['held:1']);
    } finally {
      release?.();
      await close();
    }
  });
});
