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
    // The client, with each stream read's result length noted (by the run id at the key's end).
    const reads: Record<string, number> = {};
    const client = redis;
    const watched = new Proxy(client, {
      get(target, property) {
        if (property === 'xrange')
          return async (key: string, ...rest: unknown[]) => {
            const result = await (target.xrange as (...args: unknown[]) => Promise<unknown[]>)(key, ...rest);
            reads[key.slice(key.lastIndexOf(':') + 1)] ??= result.length;
            return result;
          };
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const log = new RedisRunEventLog({ redis: watched, prefix, pollMs: 60_000 });
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
    // The follower has subscribed and made its first (empty) read before anything is appended.
    for (let i = 0; i < 500 && reads.b === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 2));
    expect(reads.b).toBe(0);
    await log.append('b', [event('b', 0), event('b', 1)]);
    await log.end('b');
    await follower;
    clearTimeout(deadline);
    await log.close();
    expect(stop.signal.aborted, 'the follower waited for its poll: no notice reached it').toBe(false);
    expect(seen).toEqual([0, 1]);
  });
});
