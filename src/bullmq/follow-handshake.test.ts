import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import type { TraceEvent } from '../trace/events.js';
import { RedisRunEventLog } from './redis-run-event-log.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const event = (runId: string, seq: number) =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1 }) as unknown as TraceEvent;

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
  'a follow that subscribes during the connection handshake',
  () => {
    it('ioredis remakes the connection before its first ready; what was published meanwhile is read, not waited for', async () => {
      if (!redis) throw new Error('no redis');
      const runId = 'r1';
      const prefix = uniquePrefix('follow-handshake');
      const subscriber = new Redis(redisUrl, { lazyConnect: true });
      const errors: string[] = [];
      subscriber.on('error', (error: Error) => errors.push(error.message));
      // A poll far longer than the test: only a read on the subscriber's return finds event 1.
      const log = new RedisRunEventLog({ redis, subscriber, prefix, pollMs: 60_000 });
      await log.append(runId, [event(runId, 0)]);
      const stop = new AbortController();
      const seen: number[] = [];
      let following: Promise<void> | undefined;
      // On `connect` the handshake (CLIENT SETINFO, then INFO) is still to come: ioredis writes a
      // SUBSCRIBE at once, its own INFO is then refused in subscriber mode, and it reconnects.
      subscriber.once('connect', () => {
        following = (async () => {
          for await (const next of log.follow(runId, -1, stop.signal)) seen.push(next.seq);
        })();
      });
      // Appended while the subscriber is away: its notice reaches no one.
      const appended = new Promise<void>((resolve) =>
        subscriber.once('reconnecting', () => {
          void log.append(runId, [event(runId, 1)]).then(() => resolve());
        }),
      );
      try {
        await subscriber.connect().catch(() => {});
        await appended;
        for (let waited = 0; waited < 3_000 && seen.length < 2; waited += 20) await sleep(20);
        expect(errors.some((message) => message.includes('subscriber mode'))).toBe(true);
        expect(seen).toEqual([0, 1]);
      } finally {
        stop.abort();
        await following;
        await log.close();
        subscriber.disconnect();
      }
    });
  },
);
