import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, uniquePrefix } from '../../test/support/redis.js';
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
  'RedisRunEventLog.follow and its abort signal',
  () => {
    // Found as a CI timeout: a follower aborted while its read was in flight went on to wait out its
    // whole poll (60 s there) before it looked at the signal again, and the caller's `await` hung.
    it.each([
      ['nothing new', 0],
      ['events to hand over', 3],
    ])(
      'an abort that lands while the follower reads (%s) ends the follow at once, not at its poll',
      async (_, count) => {
        if (!redis) throw new Error('no redis');
        const prefix = uniquePrefix('follow-abort');
        const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
        const runId = 'r1';
        for (let seq = 0; seq < count; seq++) await log.append(runId, [event(runId, seq)]);
        const stop = new AbortController();
        const read = log.read.bind(log);
        let reads = 0;
        log.read = async (...args: Parameters<RedisRunEventLog['read']>) => {
          const events = await read(...args);
          reads++;
          stop.abort();
          return events;
        };
        const seen: number[] = [];
        const following = (async () => {
          for await (const next of log.follow(runId, -1, stop.signal)) seen.push(next.seq);
        })();
        try {
          const outcome = await Promise.race([
            following.then(() => 'ended'),
            sleep(5_000).then(() => 'still waiting'),
          ]);
          expect(outcome).toBe('ended');
          expect(reads).toBe(1);
          // Events already read are not handed out after the abort.
          expect(seen.length).toBeLessThanOrEqual(1);
        } finally {
          stop.abort();
          await log.close();
          await redis.unlink(`${prefix}:events:${runId}`);
        }
      },
    );
  },
);
