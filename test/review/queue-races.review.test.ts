import { describe, expect, it } from 'vitest';
import { type CheckpointCommit, MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { InProcessRunQueue } from '../../src/queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import type { CancelResult } from '../../src/queue/run-queue.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';

const actor = { id: 'ana' };

describe('review: cancel racing a pause', () => {
  it('a cancel acknowledged while the run is committing its pause is not undone by the pause', async () => {
    const effects: string[] = [];
    let hook: (() => Promise<void>) | undefined;
    class HookedStore extends MemoryCheckpointStore {
      // @ts-expect-error: an asynchronous commit, as a durable store's is (the contract allows a promise)
      override commit(commit: CheckpointCommit) {
        if (hook && commit.status === 'ended') {
          const run = hook;
          hook = undefined;
          return run().then(() => super.commit(commit));
        }
        return super.commit(commit);
      }
    }
    const registry = new MemoryRunRegistry();
    const queue = new InProcessRunQueue({
      agents: agentRegistry([
        scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
      ]),
      checkpoint: new HookedStore(),
      registry,
      events: new MemoryRunEventLog(),
    });
    let cancelled: CancelResult | undefined;
    hook = async () => {
      cancelled = await queue.cancel('r1', 'ana');
    };
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'r1' });
    await queue.idle();
    expect(cancelled).toEqual({ ok: true, status: 'cancelling' });
    const record = await registry.get('r1');
    // The owner was told the run is being cancelled; it must not end up waiting for a verdict …
    expect.soft(record?.status).toBe('ended');
    expect.soft(record?.outcome?.kind).toBe('cancelled');
    // … and an approval must not run the confirmed effect of a cancelled run.
    const pending = record?.pendingApprovals?.[0]?.approvalId;
    if (pending) {
      await queue.submitVerdicts('r1', [{ approvalId: pending, decision: 'approve', by: 'ana' }]);
      await queue.idle();
    }
    expect(effects).not.toContain('r1:2');
  });
});

describe('review: cancel racing a verdict', () => {
  for (const order of ['verdict-first', 'cancel-first'] as const)
    it(`a cancel answered 'ended' is final: the approved call does not run (${order})`, async () => {
      const effects: string[] = [];
      const registry = new MemoryRunRegistry();
      const queue = new InProcessRunQueue({
        agents: agentRegistry([
          scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
        ]),
        checkpoint: new MemoryCheckpointStore(),
        registry,
        events: new MemoryRunEventLog(),
      });
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'r2' });
      await queue.idle();
      const paused = await registry.get('r2');
      expect(paused?.status).toBe('awaiting_approval');
      const approvalId = paused?.pendingApprovals?.[0]?.approvalId as string;
      const verdict = () => queue.submitVerdicts('r2', [{ approvalId, decision: 'approve', by: 'ana' }]);
      const cancel = () => queue.cancel('r2', 'ana');
      const [a, b] =
        order === 'verdict-first'
          ? await Promise.all([verdict(), cancel()])
          : await Promise.all([cancel(), verdict()]);
      await queue.idle();
      const cancelled = (order === 'verdict-first' ? b : a) as CancelResult;
      const final = await registry.get('r2');
      if (cancelled.ok) {
        // The owner was told the run is cancelled (or being cancelled): nothing more may run.
        expect.soft(final?.outcome?.kind).toBe('cancelled');
        expect(effects).not.toContain('r2:2');
      } else expect(final?.outcome?.kind).not.toBe('cancelled');
    });
});

import { Redis } from 'ioredis';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

describe('review: seq across pause and resume', () => {
  for (const kind of ['memory', 'redis'] as const)
    it(`every seq once, no gap, after two pauses and resumes (${kind} log)`, async () => {
      const redis = kind === 'redis' ? new Redis(redisUrl) : undefined;
      const events = redis
        ? new RedisRunEventLog({ redis, prefix: uniquePrefix('review-seq') })
        : new MemoryRunEventLog();
      const registry = new MemoryRunRegistry();
      const queue = new InProcessRunQueue({
        agents: agentRegistry([scriptedStepsAgent({ steps: 5, confirmStep: 2, effect: () => {} })]),
        checkpoint: new MemoryCheckpointStore(),
        registry,
        events,
      });
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'r3' });
      await queue.idle();
      const paused = await registry.get('r3');
      const approvalId = paused?.pendingApprovals?.[0]?.approvalId as string;
      expect(await queue.submitVerdicts('r3', [{ approvalId, decision: 'approve', by: 'ana' }])).toEqual({
        ok: true,
      });
      // A second, concurrent verdict is refused.
      expect((await queue.submitVerdicts('r3', [{ approvalId, decision: 'approve', by: 'ana' }])).ok).toBe(
        false,
      );
      await queue.idle();
      const final = await registry.get('r3');
      expect(final?.status).toBe('ended');
      const trace = await events.read('r3', -1);
      expect(trace.map((e) => e.seq)).toEqual(trace.map((_, i) => i));
      const ac = new AbortController();
      const followed: number[] = [];
      for await (const event of events.follow('r3', 3, ac.signal)) followed.push(event.seq);
      expect(followed).toEqual(trace.slice(4).map((e) => e.seq));
      await (events as RedisRunEventLog).close?.();
      redis?.disconnect();
    });
});
