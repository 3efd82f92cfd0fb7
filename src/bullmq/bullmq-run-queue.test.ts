import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { MemoryIdempotencyStore } from '../idempotency/memory-store.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { type ScriptedStepsAgentOptions, scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import type { TraceEvent } from '../trace/events.js';
import { BullmqRunQueue } from './bullmq-run-queue.js';
import { createRunWorker, type RunWorker, type RunWorkerOptions } from './run-worker.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const actor = { id: 'ana' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A queue and its workers on fresh keys; closes everything at the end. */
async function fleet(
  agent: Partial<ScriptedStepsAgentOptions> = {},
  worker: Partial<RunWorkerOptions> = {},
  workers = 1,
) {
  const prefix = uniquePrefix('bullmq');
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
  const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
  const started: RunWorker[] = [];
  const start = async () => {
    const one = await createRunWorker({
      redis: redisUrl,
      prefix,
      queueName: 'runs',
      agents,
      checkpoint,
      ...worker,
    });
    started.push(one);
    return one;
  };
  for (let i = 0; i < workers; i++) await start();
  const ended = async (runId: string, timeoutMs = 20_000) => {
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
    await queue.close();
  };
  return { queue, effects, start, started, ended, close, prefix };
}

function expectContiguous(events: readonly TraceEvent[]) {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
}

describe('BullmqRunQueue and createRunWorker (real Redis)', () => {
  it('runs a job to its outcome; the trace streams with contiguous seq; a duplicate id is refused', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const { queue, effects, ended, close } = await fleet();
    try {
      expect(await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'one' })).toEqual({
        ok: true,
        runId: 'one',
      });
      const followed: TraceEvent[] = [];
      const following = (async () => {
        for await (const event of queue.events.follow('one', -1, new AbortController().signal))
          followed.push(event);
      })();
      expect(await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'one' })).toMatchObject({
        ok: false,
        reason: 'duplicate_run',
      });
      const record = await ended('one');
      expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, steps: 4, attempts: 1 });
      await following;
      const trace = await queue.events.read('one', -1);
      expectContiguous(trace);
      expect(followed).toEqual(trace);
      expect(effects).toEqual(['one:1', 'one:2', 'one:3']);
      expect((await queue.registry.list({ actorId: 'ana' })).map((run) => run.runId)).toEqual(['one']);
    } finally {
      await close();
    }
  });

  it('parks a run for approval, refuses a stale id, resumes once for two concurrent verdicts', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const { queue, effects, ended, close } = await fleet({ confirmStep: 2 });
    try {
      await queue.enqueue({
        agent: 'steps',
        input: 'go',
        actor: { id: 'ana', scopes: ['refunds'] },
        runId: 'pay',
      });
      const parked = await ended('pay');
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
      const done = await ended('pay');
      expect(done).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, attempts: 2 });
      expect(effects).toEqual(['pay:1', 'pay:2', 'pay:3']);
      expectContiguous(await queue.events.read('pay', -1));
    } finally {
      await close();
    }
  });

  it('cancels a queued run (removed, never run) and a running one (its signal, on the worker)', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { queue, effects, ended, close, start } = await fleet(
      { beforeStep: (step, { runId }) => (runId === 'slow' && step === 2 ? gate : undefined) },
      {},
      0,
    );
    try {
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'waiting' });
      expect(await queue.cancel('waiting', 'ana')).toEqual({ ok: true, status: 'ended' });
      await start();
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'slow' });
      while (!effects.includes('slow:1')) await sleep(10);
      expect(await queue.cancel('slow', 'ana')).toEqual({ ok: true, status: 'cancelling' });
      const record = await ended('slow');
      release?.();
      expect(record.outcome?.kind).toBe('cancelled');
      expect((await queue.registry.get('waiting'))?.outcome?.kind).toBe('cancelled');
      expect(effects.filter((key) => key.startsWith('waiting'))).toEqual([]);
      expect(effects.filter((key) => key.startsWith('slow'))).toEqual(['slow:1']);
    } finally {
      release?.();
      await close();
    }
  });

  it('drains on close: the run stops after its step and another worker resumes it, nothing repeated', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    let first: RunWorker | undefined;
    let closing: Promise<void> | undefined;
    const { queue, effects, ended, close, start } = await fleet(
      {
        steps: 6,
        beforeStep: (step, { attempt }) => {
          // SIGTERM arrives while step 3's model call is in flight.
          if (step === 3 && attempt === 1) closing = first?.close();
        },
      },
      {},
      0,
    );
    try {
      first = await start();
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'drained' });
      while (!closing) await sleep(10);
      await closing;
      expect((await queue.registry.get('drained'))?.status).toBe('queued');
      await start();
      const record = await ended('drained');
      expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, attempts: 2, steps: 6 });
      expect(effects).toEqual(['drained:1', 'drained:2', 'drained:3', 'drained:4', 'drained:5']);
      expectContiguous(await queue.events.read('drained', -1));
    } finally {
      await close();
    }
  });

  it('holds a tenant to its concurrency over two workers', { timeout: 30_000 }, async ({ skip }) => {
    if (!redis) return skip();
    let running = 0;
    let most = 0;
    const { queue, ended, close } = await fleet(
      {
        // Counted inside the run's slot: from its first model call to its last.
        beforeStep: async (step) => {
          if (step === 4) running--;
          if (step !== 1) return;
          running++;
          most = Math.max(most, running);
          await sleep(30);
        },
        effect: () => {},
      },
      { tenants: { maxRunning: 1 }, tenantRetryMs: 20 },
      2,
    );
    try {
      const ids = ['t1', 't2', 't3'];
      for (const runId of ids)
        await queue.enqueue({ agent: 'steps', input: 'go', actor, runId, tenant: 'acme' });
      for (const runId of ids) await ended(runId);
      for (const runId of ids) expect((await queue.registry.get(runId))?.outcome?.kind).toBe('answered');
      expect(most).toBe(1);
    } finally {
      await close();
    }
  });
});
