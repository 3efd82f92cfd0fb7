import { afterAll, describe, expect, it } from 'vitest';
import { BullmqRunQueue } from '../../src/bullmq/bullmq-run-queue.js';
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
    expect((await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId: 'a' })).ok).toBe(true);
    await (await queue.queue.getJob('a'))?.remove();
    await queue.registry.update('a', {
      status: 'awaiting_approval',
      attempts: 1,
      pendingApprovals: [{ approvalId: 'p1' } as never],
    });
    // Another caller (another tenant) picks a run id that is a legal BullMQ id.
    expect((await queue.enqueue({ agent: 'steps', input: 'x', actor: { id: 'eve' }, runId: 'a.resume.1' })).ok).toBe(
      true,
    );
    const verdict = await queue.submitVerdicts('a', [{ approvalId: 'p1', decision: 'approve', by: 'ana' }]);
    expect(verdict).toEqual({ ok: true });
    // The verdict was accepted and the record says queued: a resume job for "a" must exist.
    const jobs = await queue.queue.getJobs(['waiting', 'prioritized', 'delayed', 'active']);
    const resumes = jobs.filter((job) => job.data.runId === 'a' && job.data.verdicts);
    expect(resumes).toHaveLength(1);
  });
});
