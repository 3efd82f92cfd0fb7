import { afterAll, describe, expect, it } from 'vitest';
import { BullmqRunQueue } from '../../src/bullmq/bullmq-run-queue.js';
import { createRunWorker } from '../../src/bullmq/run-worker.js';
import { type CheckpointCommit, MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import type { CancelResult } from '../../src/queue/run-queue.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

const queues: BullmqRunQueue[] = [];
afterAll(async () => {
  for (const queue of queues) await queue.close();
});

describe('review: BullMQ job ids', () => {
  it("a run enqueued with id '<other>.resume.<n>' does not swallow the other run's resume job", async () => {
    const queue = new BullmqRunQueue({ redis: redisUrl, prefix: uniquePrefix('review'), queueName: 'runs' });
    queues.push(queue);
    // Run "a" is paused after its first attempt (as a worker leaves it).
    expect((await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId: 'a' })).ok).toBe(
      true,
    );
    await (await queue.queue.getJob('a'))?.remove();
    await queue.registry.update('a', {
      status: 'awaiting_approval',
      attempts: 1,
      pendingApprovals: [{ approvalId: 'p1' } as never],
    });
    // Another caller (another tenant) picks a run id that is a legal BullMQ id.
    // It is refused: a run id may not take the shape of a resume job's id.
    await expect(
      queue.enqueue({ agent: 'steps', input: 'x', actor: { id: 'eve' }, runId: 'a.resume.1' }),
    ).rejects.toThrow(/\.resume\./);
    const verdict = await queue.submitVerdicts('a', [{ approvalId: 'p1', decision: 'approve', by: 'ana' }]);
    expect(verdict).toEqual({ ok: true });
    // The verdict was accepted and the record says queued: a resume job for "a" must exist.
    const jobs = await queue.queue.getJobs(['waiting', 'prioritized', 'delayed', 'active']);
    const resumes = jobs.filter((job) => job.data.runId === 'a' && job.data.verdicts);
    expect(resumes).toHaveLength(1);
  });
});

describe('review: BullMQ cancel racing a pause', () => {
  it('a cancel acknowledged while the worker parks the run is not undone by the park', async () => {
    const prefix = uniquePrefix('review-park');
    const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
    queues.push(queue);
    const effects: string[] = [];
    let cancelled: CancelResult | undefined;
    let hooked = false;
    class HookedStore extends MemoryCheckpointStore {
      // @ts-expect-error: an asynchronous commit, as a durable store's is (the contract allows a promise)
      override commit(commit: CheckpointCommit) {
        if (!hooked && commit.status === 'ended') {
          hooked = true;
          return queue.cancel(commit.runId, 'ana').then((result) => {
            cancelled = result;
            return super.commit(commit);
          });
        }
        return super.commit(commit);
      }
    }
    const worker = await createRunWorker({
      redis: redisUrl,
      prefix,
      queueName: 'runs',
      agents: agentRegistry([
        scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
      ]),
      checkpoint: new HookedStore(),
    });
    try {
      await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId: 'p1' });
      const until = Date.now() + 20_000;
      let record = await queue.registry.get('p1');
      while (
        Date.now() < until &&
        !(cancelled && record && ['ended', 'awaiting_approval'].includes(record.status))
      ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        record = await queue.registry.get('p1');
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      record = await queue.registry.get('p1');
      expect(cancelled).toEqual({ ok: true, status: 'cancelling' });
      expect(record?.status).toBe('ended');
      expect(record?.outcome?.kind).toBe('cancelled');
    } finally {
      await worker.close();
    }
  });
});
