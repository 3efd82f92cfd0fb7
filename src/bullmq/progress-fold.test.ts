import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { executeRun } from '../queue/execute-run.js';
import { queuedRecord } from '../queue/run-stores.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import { RedisCheckpointStore } from '../redis/redis-checkpoint-store.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')("a step's progress written with its events", () => {
  it('the record shows each step as it lands, with no record update of its own', async () => {
    const client = new Redis(redisUrl, { maxRetriesPerRequest: null });
    try {
      const prefix = uniquePrefix('progress-fold');
      const registry = new RedisRunRegistry({ redis: client, prefix });
      const events = new RedisRunEventLog({ redis: client, prefix, records: registry });
      expect(events.recordsProgress(registry)).toBe(true);
      let updates = 0;
      const update = registry.update.bind(registry);
      registry.update = (...args: Parameters<typeof update>) => {
        updates++;
        return update(...args);
      };
      const seenAtStep = new Map<number, number | undefined>();
      const agents = agentRegistry([
        scriptedStepsAgent({
          steps: 5,
          effect: () => {},
          beforeStep: async (step) => {
            seenAtStep.set(step, (await registry.get('r1'))?.steps);
          },
        }),
      ]);
      const checkpoint = new RedisCheckpointStore({ redis: client, keyPrefix: `${prefix}:checkpoint` });
      await registry.create(queuedRecord('r1', request, 1));
      const done = await executeRun({ runId: 'r1', request }, { agents, checkpoint, registry, events });
      expect(done.kind).toBe('ended');
      // Before call k the record counts the k - 1 steps whose events (and checkpoint) landed.
      expect([...seenAtStep]).toEqual([
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 3],
        [5, 4],
      ]);
      // Only the end writes the record through `update`; the steps rode on the appends.
      expect(updates).toBe(1);
      const record = await registry.get('r1');
      expect(record).toMatchObject({ status: 'ended', steps: 5 });
      expect(record?.billedTokens).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  });

  it("a record deleted mid-run is not made again by a step's progress", async () => {
    if (!redis) throw new Error('no redis');
    const client = redis;
    const prefix = uniquePrefix('progress-deleted');
    const registry = new RedisRunRegistry({ redis: client, prefix });
    const events = new RedisRunEventLog({ redis: client, prefix, records: registry });
    const after: number[] = [];
    const agents = agentRegistry([
      scriptedStepsAgent({
        steps: 4,
        effect: () => {},
        beforeStep: async (step) => {
          if (step === 2) await client.del(registry.recordKey('r2'));
          if (step >= 3) after.push(await client.exists(registry.recordKey('r2')));
        },
      }),
    ]);
    const checkpoint = new RedisCheckpointStore({ redis: client, keyPrefix: `${prefix}:checkpoint` });
    await registry.create(queuedRecord('r2', request, 1));
    await executeRun({ runId: 'r2', request }, { agents, checkpoint, registry, events });
    expect(after).toEqual([0, 0]);
    expect(await registry.get('r2')).toBeUndefined();
  });

  it('only the registry it was made with, under its own prefix', () => {
    if (!redis) throw new Error('no redis');
    const client = redis;
    const prefix = uniquePrefix('progress-which');
    const registry = new RedisRunRegistry({ redis: client, prefix });
    const events = new RedisRunEventLog({ redis: client, prefix, records: registry });
    expect(events.recordsProgress(new RedisRunRegistry({ redis: client, prefix }))).toBe(false);
    expect(new RedisRunEventLog({ redis: client, prefix }).recordsProgress(registry)).toBe(false);
    expect(
      () => new RedisRunEventLog({ redis: client, prefix: `${prefix}-other`, records: registry }),
    ).toThrow(ConfigurationError);
  });
});
