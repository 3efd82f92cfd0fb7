import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deltaCommit, fixtureState, snapshotCommit, stepOf } from '../../test/support/checkpoint-fixtures.js';
import { connectTestRedis, uniquePrefix } from '../../test/support/redis.js';
import { RedisRunEventLog } from '../bullmq/redis-run-event-log.js';
import type { RunState } from '../loop/run-state.js';
import type { TraceEvent } from '../trace/events.js';
import { RedisCheckpointStore } from './redis-checkpoint-store.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

/**
 * The client as a dropped connection leaves it: every script (the commit, the append) reaches
 * Redis twice with the same arguments, as ioredis resends a command whose reply it never read;
 * the caller gets the second reply.
 */
function resending(client: Redis): Redis {
  const scripts = new Set(['eval', 'evalsha', 'reinsCheckpointCommitV2']);
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !scripts.has(property) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await value.apply(receiver, args);
        return value.apply(receiver, args);
      };
    },
  });
}

const event = (seq: number, step = seq) =>
  ({ v: 1, runId: 'r', seq, at: 1, type: 'step-start', step }) as unknown as TraceEvent;

// A resend is taken as applied; another call, even with the same bytes, is another writer: refused.
describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
  'a resent write is taken as applied, and only a resent one',
  () => {
    it('checkpoint commit: a resend of the claim or of a step is ok; the same commit from another call is refused', async () => {
      if (!redis) throw new Error('no redis');
      const keyPrefix = uniquePrefix('resend-cp');
      const store = new RedisCheckpointStore({ redis: resending(redis), keyPrefix });
      const other = new RedisCheckpointStore({ redis, keyPrefix });
      const first: RunState = { ...fixtureState('r'), revision: 1 };
      const claim = snapshotCommit(fixtureState('r'));
      expect(await store.commit(claim)).toEqual({ ok: true });
      // Three workers resuming one state write the same bytes: only the first call's is taken.
      expect(await other.commit(claim)).toEqual({ ok: false, currentRevision: 1 });
      const next = stepOf(first, 'a');
      const step = deltaCommit(first, next);
      expect(await store.commit(step)).toEqual({ ok: true });
      expect(await other.commit(step)).toEqual({ ok: false, currentRevision: 2 });
      expect(await store.commit(step)).toEqual({ ok: false, currentRevision: 2 });
      const loaded = await store.load('r');
      expect(loaded?.revision).toBe(2);
      expect(loaded?.messages).toEqual(next.messages);
      expect((await redis.lrange(`${keyPrefix}:{r}:log`, 0, -1)).map((entry) => entry.slice(0, 2))).toEqual([
        's1',
        'd2',
      ]);
    });

    it('event log append: a resend is ok and adds nothing; the same batch from another call is refused', async () => {
      if (!redis) throw new Error('no redis');
      const prefix = uniquePrefix('resend-log');
      const log = new RedisRunEventLog({ redis: resending(redis), prefix });
      const other = new RedisRunEventLog({ redis, prefix });
      const batch = [event(0), event(1), event(2)];
      await log.append('r', batch);
      await expect(other.append('r', batch)).rejects.toThrow();
      await log.append('r', [event(3)]);
      await expect(other.append('r', [event(3)])).rejects.toThrow();
      await expect(other.append('r', [event(2), event(3)])).rejects.toThrow();
      await log.append('r', [event(4), event(5)]);
      expect((await other.read('r', -1)).map((one) => one.seq)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(await other.nextSeq('r')).toBe(6);
      await log.close();
      await other.close();
    });
  },
);
