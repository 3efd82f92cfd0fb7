import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import type { ApprovalRequest } from '../loop/approval.js';
import { BullmqRunQueue } from './bullmq-run-queue.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

// Found by an adversarial review: a verdict leaves the record `queued` with a resume job named by
// the pause (`<run>.resume.<pause>`); cancel looked only for a job named `<run>`, so the run was
// left `cancelling` with its resume job waiting, and ended only if a worker ever took that job.
it('a run a verdict resumed, cancelled before a worker takes it, ends at once and its resume job is gone', async ({
  skip,
}) => {
  if (!redis) return skip();
  const queue = new BullmqRunQueue({
    redis: redisUrl,
    prefix: uniquePrefix('cancel-resumed'),
    queueName: 'runs',
  });
  try {
    const queued = await queue.enqueue({
      runId: 'run_r',
      agent: 'support',
      input: 'hi',
      actor: { id: 'ana' },
    });
    expect(queued.ok).toBe(true);
    // A worker ran it to a pause: its first job completed (removeOnComplete) and the record parked.
    await (await queue.queue.getJob('run_r'))?.remove();
    const approval: ApprovalRequest = {
      approvalId: 'call_1:0001',
      callId: 'call_1',
      tool: 'refund',
      input: {},
      effect: 'write',
      cause: 'confirm',
      reason: 'Refund.',
      untrustedArguments: [],
    } as unknown as ApprovalRequest;
    await queue.registry.update('run_r', { status: 'awaiting_approval', pendingApprovals: [approval] });
    expect(await queue.submitVerdicts('run_r', [{ approvalId: 'call_1:0001', decision: 'approve' }])).toEqual(
      { ok: true },
    );
    expect((await queue.registry.get('run_r'))?.status).toBe('queued');
    expect(await queue.queue.getJobs(['waiting', 'delayed', 'prioritized'])).toHaveLength(1);

    expect(await queue.cancel('run_r', 'ana')).toEqual({ ok: true, status: 'ended' });
    expect(await queue.registry.get('run_r')).toMatchObject({
      status: 'ended',
      outcome: { kind: 'cancelled' },
    });
    expect(await queue.queue.getJobs(['waiting', 'delayed', 'prioritized'])).toEqual([]);
  } finally {
    await queue.queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
});
