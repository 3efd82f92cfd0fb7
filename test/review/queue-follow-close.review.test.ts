import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { connectTestRedis, uniquePrefix } from '../support/redis.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const event = (runId: string, seq: number) =>
  ({ v: 1, runId, seq, at: 0, type: 'step-start' }) as unknown as TraceEvent;

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')('review: RedisRunEventLog after close()', () => {
  it('a follow after close() still hears notices (the new subscriber gets the message handler) (pre-existing)', async () => {
    if (!redis) throw new Error('no redis');
    // A poll of a minute: a follower that hears no notice shows as one that does not finish.
    const prefix = uniquePrefix('follow-close');
    const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
    const first = new AbortController();
    // The first follow makes the log's own subscriber (and registers its handler) …
    const firstFollow = (async () => {
      for await (const _ of log.follow('a', -1, first.signal));
    })();
    await log.append('a', [event('a', 0)]);
    await log.end('a');
    await firstFollow;
    // … close() drops it; the next follow makes a new one.
    await log.close();
    const stop = new AbortController();
    const deadline = setTimeout(() => stop.abort(), 3_000);
    const seen: number[] = [];
    const follower = (async () => {
      for await (const one of log.follow('b', -1, stop.signal)) seen.push(one.seq);
    })();
    // Let the follower subscribe before anything is appended.
    for (let i = 0; i < 500; i++) {
      const [, count] = (await redis.pubsub('NUMSUB', `${prefix}:events-notice:b`)) as [string, number];
      if (Number(count) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await log.append('b', [event('b', 0), event('b', 1)]);
    await log.end('b');
    await follower;
    clearTimeout(deadline);
    await log.close();
    expect(stop.signal.aborted, 'the follower waited for its poll: no notice reached it').toBe(false);
    expect(seen).toEqual([0, 1]);
  });
});
