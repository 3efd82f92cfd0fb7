import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { connectTestRedis, redisUrl, uniquePrefix } from '../support/redis.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ev = (runId: string, seq: number) =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1 }) as unknown as TraceEvent;

function followSeqs(log: RedisRunEventLog, runId: string, after = -1) {
  const stop = new AbortController();
  const seen: number[] = [];
  const done = (async () => {
    for await (const e of log.follow(runId, after, stop.signal)) seen.push(e.seq);
    return !stop.signal.aborted;
  })();
  return { seen, done, stop };
}

describe('follow across a subscriber reconnect / close', () => {
  it('subscriber killed between appends: the next carried notice shows a gap and the follower reads it', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('reconnect');
    const subscriber = new Redis(redisUrl);
    const id = await subscriber.call('CLIENT', 'ID');
    const log = new RedisRunEventLog({ redis, subscriber, prefix, pollMs: 60_000 });
    try {
      await log.append('r', [ev('r', 0)]);
      const f = followSeqs(log, 'r');
      await sleep(100);
      const reconnected = new Promise((resolve) => subscriber.once('ready', resolve));
      await redis.call('CLIENT', 'KILL', 'ID', String(id));
      await log.append('r', [ev('r', 1), ev('r', 2)]); // notice lost
      await reconnected;
      await sleep(100);
      await log.append('r', [ev('r', 3)]);
      await log.end('r');
      const timer = setTimeout(() => f.stop.abort(), 5_000);
      expect(await f.done).toBe(true);
      clearTimeout(timer);
      expect(f.seen).toEqual([0, 1, 2, 3]);
    } finally {
      subscriber.disconnect();
    }
  });

  it('close() while a follower of the run is active: a later follower of that run on the same log gets no notices', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('close-follow');
    const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
    await log.append('r', [ev('r', 0)]);
    const old = followSeqs(log, 'r');
    await sleep(100);
    await log.close();
    const fresh = followSeqs(log, 'r');
    await sleep(100);
    await log.append('r', [ev('r', 1)]);
    await log.end('r');
    const timer = setTimeout(() => {
      old.stop.abort();
      fresh.stop.abort();
    }, 5_000);
    const freshEnded = await fresh.done;
    await old.done;
    clearTimeout(timer);
    await log.close();
    expect(freshEnded).toBe(true);
    expect(fresh.seen).toEqual([0, 1]);
  });
});
