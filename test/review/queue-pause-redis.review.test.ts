import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BullmqRunQueue } from '../../src/bullmq/bullmq-run-queue.js';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { executeRun } from '../../src/queue/execute-run.js';
import type { CancelResult, RunRecord } from '../../src/queue/run-queue.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import { staticTokens } from '../../src/server/authenticate.js';
import { createRunService } from '../../src/server/run-service.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { connectTestRedis, redisUrl, uniquePrefix } from '../support/redis.js';

let redis: Redis | undefined;
const queues: BullmqRunQueue[] = [];
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(async () => {
  for (const queue of queues) await queue.close();
  redis?.disconnect();
});

const actor = { id: 'ana' };
const request = { agent: 'steps', input: 'go', actor };

function isPauseEnd(batch: readonly TraceEvent[]): boolean {
  return batch.some((event) => event.type === 'run-end' && event.outcome.kind === 'awaiting_approval');
}

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
  'review: the held pause and the BullMQ queue',
  () => {
    it('a cancel of the parked run before its held run-end is written: no event reaches the log after the record ended or the log ended', async () => {
      if (!redis) throw new Error('no redis');
      const prefix = uniquePrefix('review-hold');
      const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
      queues.push(queue);
      expect((await queue.enqueue({ ...request, runId: 'h1' })).ok).toBe(true);
      // No worker: this test executes the job itself.
      await (await queue.queue.getJob('h1'))?.remove();
      const client = redis;
      let cancelled: CancelResult | undefined;
      let atAppend: { record: RunRecord | undefined; logEnded: boolean } | undefined;
      let followerSaw: string[] | undefined;
      class Hooked extends RedisRunEventLog {
        override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
          if (!cancelled && isPauseEnd(batch)) {
            // A person cancels the run the moment its record says it waits for approval.
            cancelled = await queue.cancel(runId, 'ana');
            atAppend = {
              record: await queue.registry.get(runId),
              logEnded: (await client.exists(`${prefix}:events-ended:${runId}`)) === 1,
            };
            if (atAppend.logEnded) {
              // A follower (the viewer, GET /runs/:id/events) that comes now.
              const stop = new AbortController();
              const deadline = setTimeout(() => stop.abort(), 5_000);
              followerSaw = [];
              for await (const event of queue.events.follow(runId, -1, stop.signal))
                followerSaw.push(event.type);
              clearTimeout(deadline);
            }
          }
          return super.append(runId, batch);
        }
      }
      const result = await executeRun(
        { runId: 'h1', request },
        {
          agents: agentRegistry([scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: () => {} })]),
          checkpoint: new MemoryCheckpointStore(),
          registry: queue.registry,
          events: new Hooked({ redis: client, prefix }),
        },
      );
      expect(cancelled?.ok).toBe(true);
      expect(result.kind).not.toBe('skipped');
      // The pause's run-end is appended after the cancel ended the run's record and its log.
      expect
        .soft(atAppend?.record?.status, 'the record when the pause run-end is appended')
        .not.toBe('ended');
      expect.soft(atAppend?.logEnded, 'the end marker when the pause run-end is appended').toBe(false);
      // A follower that came between the two stopped at the end marker, without the run-end.
      if (followerSaw) expect.soft(followerSaw.at(-1)).toBe('run-end');
      const trace = await queue.events.read('h1', -1);
      expect(trace.at(-1)?.type).toBe('run-end');
    });

    it('GET /runs/:id/events of the run the cancel ended: the client gets every event of the trace, the pause run-end too, before end', async () => {
      if (!redis) throw new Error('no redis');
      const prefix = uniquePrefix('review-hold-sse');
      const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
      queues.push(queue);
      expect((await queue.enqueue({ ...request, runId: 'e1' })).ok).toBe(true);
      await (await queue.queue.getJob('e1'))?.remove();
      const app = createRunService({
        queue,
        runs: queue.registry,
        events: queue.events,
        authenticate: staticTokens({ 'token-ana-0001': 'ana' }),
      });
      const client = redis;
      let streamed: string | undefined;
      let hooked = false;
      class Hooked extends RedisRunEventLog {
        override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
          if (!hooked && isPauseEnd(batch)) {
            hooked = true;
            // A person cancels the parked run, and the viewer opens its trace (once the record ended).
            const cancelled = await queue.cancel(runId, 'ana');
            if (cancelled.ok && cancelled.status === 'ended') {
              const response = await app.request(`/runs/${runId}/events`, {
                headers: { Authorization: 'Bearer token-ana-0001' },
              });
              streamed = await response.text();
            }
          }
          return super.append(runId, batch);
        }
      }
      await executeRun(
        { runId: 'e1', request },
        {
          agents: agentRegistry([scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: () => {} })]),
          checkpoint: new MemoryCheckpointStore(),
          registry: queue.registry,
          events: new Hooked({ redis: client, prefix }),
        },
      );
      const trace = await queue.events.read('e1', -1);
      expect(hooked).toBe(true);
      // Before f47feee the cancel lands while the run is running (it is cancelled by its worker).
      if (streamed === undefined) return;
      const sent = [...streamed.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
      expect(streamed).toMatch(/event: end/);
      // The stream said `end`: it must have sent every event the run's trace holds.
      expect(sent).toEqual(trace.map((event) => event.seq));
    });

    it('a cancel that read the record as awaiting_approval, while a worker resumed it meanwhile, tells that worker (pre-existing)', async () => {
      if (!redis) throw new Error('no redis');
      const prefix = uniquePrefix('review-stale-cancel');
      const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
      queues.push(queue);
      expect((await queue.enqueue({ ...request, runId: 's1' })).ok).toBe(true);
      await (await queue.queue.getJob('s1'))?.remove();
      const pending = [{ approvalId: 'p1', callId: 'c', tool: 'confirmed_effect', input: {} } as never];
      await queue.registry.update('s1', {
        status: 'awaiting_approval',
        attempts: 1,
        pendingApprovals: pending,
      });
      // Who hears the cancel: every worker listens on this channel.
      const listener = client().duplicate();
      const heard: string[] = [];
      listener.on('message', (_channel: string, runId: string) => heard.push(runId));
      await listener.subscribe(`${prefix}:run-cancel`);
      const registry = queue.registry;
      const get = registry.get.bind(registry);
      let first = true;
      registry.get = async (runId: string) => {
        const record = await get(runId);
        if (first) {
          first = false;
          // Between the cancel's read and its compare-and-set: the verdict is accepted and a worker
          // takes the resume job (the record is `running`, the approved call about to run).
          await registry.update(runId, { status: 'queued' }, ['awaiting_approval']);
          expect(await registry.start?.(runId, Date.now(), ['queued'])).toBeDefined();
        }
        return record;
      };
      const cancelled = await queue.cancel('s1', 'ana');
      await listener.ping();
      await listener.quit();
      // A worker holds the run: it must hear the cancel (or the run must not be ended under it).
      expect.soft(cancelled).toEqual({ ok: true, status: 'cancelling' });
      expect.soft(heard, 'the cancel published to the workers').toEqual(['s1']);
      expect.soft((await get('s1'))?.status).toBe('cancelling');
    });
  },
);

function client(): Redis {
  if (!redis) throw new Error('no redis');
  return redis;
}
