import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { connectTestRedis, redisUrl } from '../support/redis.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ev = (runId: string, seq: number, note = '') =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1, note }) as unknown as TraceEvent;
const tag = () => Math.random().toString(36).slice(2, 10).padEnd(8, '0');

/** Follows until the run ends or `ms` passes; the notes seen. */
function followNotes(log: RedisRunEventLog, runId: string, afterSeq = -1) {
  const stop = new AbortController();
  const seen: { seq: number; note: string }[] = [];
  const done = (async () => {
    for await (const e of log.follow(runId, afterSeq, stop.signal))
      seen.push({ seq: e.seq, note: (e as unknown as { note: string }).note });
    return !stop.signal.aborted;
  })();
  return { seen, done, stop };
}

describe('carried notices: events from outside this log', () => {
  it('two logs (tenant prefixes of equal length) sharing one subscriber: a follower of A yields B’s events', async () => {
    if (!redis) throw new Error('no redis');
    const t = tag();
    const prefixA = `ta-${t}`;
    const prefixB = `tb-${t}`; // same length as prefixA
    const subscriber = new Redis(redisUrl);
    const logA = new RedisRunEventLog({ redis, subscriber, prefix: prefixA, pollMs: 60_000 });
    const logB = new RedisRunEventLog({ redis, subscriber, prefix: prefixB, pollMs: 60_000 });
    try {
      await logA.append('r1', [ev('r1', 0, 'A')]);
      const a = followNotes(logA, 'r1');
      const b = followNotes(logB, 'r1'); // installs B's handler on the shared subscriber
      await sleep(100);
      await logB.append('r1', [ev('r1', 0, 'B'), ev('r1', 1, 'B')]);
      await sleep(200);
      await logA.append('r1', [ev('r1', 1, 'A')]);
      await logA.end('r1');
      await logB.end('r1');
      const timer = setTimeout(() => {
        a.stop.abort();
        b.stop.abort();
      }, 5_000);
      await Promise.all([a.done, b.done]);
      clearTimeout(timer);
      // Contract: A's follower sees A's stream: [0 A, 1 A].
      expect(a.seen).toEqual([
        { seq: 0, note: 'A' },
        { seq: 1, note: 'A' },
      ]);
    } finally {
      subscriber.disconnect();
    }
  });

  it('pub/sub ignores SELECT: a follower on db 0 yields events appended to the same prefix/run on db 1', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = `dbs-${tag()}`;
    const db1 = new Redis(redisUrl, { db: 1 });
    const log0 = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
    const log1 = new RedisRunEventLog({ redis: db1, prefix, pollMs: 60_000 });
    try {
      await log0.append('order-1001', [ev('order-1001', 0, 'db0')]);
      const f = followNotes(log0, 'order-1001');
      await sleep(100);
      // Another deployment (staging on db 1, same default prefix, same caller-chosen run id).
      await log1.append('order-1001', [ev('order-1001', 0, 'db1'), ev('order-1001', 1, 'db1')]);
      await sleep(200);
      await log0.append('order-1001', [ev('order-1001', 1, 'db0')]);
      await log0.end('order-1001');
      const timer = setTimeout(() => f.stop.abort(), 5_000);
      await f.done;
      clearTimeout(timer);
      expect(f.seen).toEqual([
        { seq: 0, note: 'db0' },
        { seq: 1, note: 'db0' },
      ]);
    } finally {
      await log0.close();
      await log1.close();
      await db1.del(`${prefix}:events:order-1001`);
      db1.disconnect();
    }
  });

  it('a follower that starts as the last follower of the same run leaves still gets notices (shared subscriber UNSUBSCRIBE then SUBSCRIBE)', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = `resub-${tag()}`;
    const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
    try {
      await log.append('r', [ev('r', 0)]);
      const first = followNotes(log, 'r');
      await sleep(100);
      first.stop.abort();
      const second = followNotes(log, 'r', 0); // its SUBSCRIBE goes out right behind the UNSUBSCRIBE
      await first.done;
      await sleep(200);
      await log.append('r', [ev('r', 1)]);
      await log.append('r', [ev('r', 2)]);
      await log.end('r');
      const timer = setTimeout(() => second.stop.abort(), 5_000);
      const ended = await second.done;
      clearTimeout(timer);
      expect(second.seen.map((e) => e.seq)).toEqual([1, 2]);
      expect(ended).toBe(true);
    } finally {
      await log.close();
    }
  });
});
