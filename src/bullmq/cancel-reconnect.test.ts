import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import { BullmqRunQueue } from './bullmq-run-queue.js';
import { createRunWorker } from './run-worker.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ids of the pub/sub connections named `name` (the worker's cancel subscriber). */
async function subscriberIds(admin: Redis, name: string): Promise<string[]> {
  const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1] as string);
}

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
  'a cancel sent while the worker’s subscriber is away',
  () => {
    it('reaches the run once the subscriber is back: the run ends cancelled, not at its last step', {
      timeout: 30_000,
    }, async ({ skip }) => {
      if (!redis) return skip();
      const prefix = uniquePrefix('cancel-reconnect');
      const name = `cancel-reconnect-${process.pid}-${Date.now()}`;
      const connection = new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName: name });
      let release: (() => void) | undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const effects: string[] = [];
      const agents = agentRegistry([
        scriptedStepsAgent({
          steps: 4,
          effect: ({ key }) => void effects.push(key),
          beforeStep: (step) => (step === 2 ? gate : undefined),
        }),
      ]);
      const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
      const worker = await createRunWorker({
        redis: connection,
        prefix,
        queueName: 'runs',
        agents,
        checkpoint: new MemoryCheckpointStore(),
      });
      try {
        await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId: 'held' });
        while (!effects.includes('held:1')) await sleep(10);
        const ids = await subscriberIds(redis, name);
        expect(ids).toHaveLength(1);
        // Redis drops the subscriber; ioredis reconnects after its retry delay (50 ms and more).
        await redis.call('CLIENT', 'KILL', 'ID', ids[0] as string);
        expect(await queue.cancel('held', 'ana')).toEqual({ ok: true, status: 'cancelling' });
        // Not released: without the cancel the run waits at step 2 until the end of the test.
        let record = await queue.registry.get('held');
        for (let waited = 0; waited < 5_000 && record?.status !== 'ended'; waited += 20) {
          await sleep(20);
          record = await queue.registry.get('held');
        }
        expect(record?.status).toBe('ended');
        expect(record?.outcome?.kind).toBe('cancelled');
        expect(effects).toEqual(['held:1']);
      } finally {
        release?.();
        await worker.close();
        await queue.close();
        connection.disconnect();
      }
    });
  },
);
