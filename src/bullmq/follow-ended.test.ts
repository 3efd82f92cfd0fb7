import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, uniquePrefix } from '../../test/support/redis.js';
import { queuedRecord } from '../queue/run-stores.js';
import type { TraceEvent } from '../trace/events.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
const event = (runId: string, seq: number, type = 'step-start') =>
  ({ v: 1, runId, seq, at: seq, type, step: 1 }) as unknown as TraceEvent;

/** Follows from the start for at most `ms`: the events seen, and whether the follow ended by itself. */
async function followFor(log: RedisRunEventLog, runId: string, ms: number) {
  const stop = new AbortController();
  const seen: number[] = [];
  let ended = false;
  const following = (async () => {
    for await (const next of log.follow(runId, -1, stop.signal)) seen.push(next.seq);
    ended = !stop.signal.aborted;
  })();
  await Promise.race([following, sleep(ms)]);
  stop.abort();
  await following;
  return { seen, ended };
}

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')('RedisRunEventLog.follow and the run record', () => {
  it('a run whose record expired (its tombstone stays) ends the follow: nothing left to wait for', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('follow-expired');
    const registry = new RedisRunRegistry({ redis, prefix, endedRunTtlMs: 30 });
    const log = new RedisRunEventLog({ redis, prefix, endedRunTtlMs: 30, pollMs: 60_000 });
    try {
      await registry.create(queuedRecord('gone', request, 1));
      await log.append('gone', [event('gone', 0)]);
      await registry.update('gone', { status: 'ended', outcome: { kind: 'answered', text: 'ok' } });
      await log.end('gone');
      await sleep(100);
      expect(await redis.exists(`${prefix}:run:gone`, `${prefix}:events:gone`)).toBe(0);
      expect(await followFor(log, 'gone', 2_000)).toEqual({ seen: [], ended: true });
    } finally {
      await log.close();
    }
  });

  it('a record ended before its end marker is written: the follower still gets every event, then stops', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('follow-record-first');
    const registry = new RedisRunRegistry({ redis, prefix });
    const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
    try {
      await registry.create(queuedRecord('r', request, 1));
      await log.append('r', [event('r', 0), event('r', 1), event('r', 2, 'run-end')]);
      // The executor's order: the record ends, then the end marker (not written here at all).
      await registry.update('r', { status: 'ended', outcome: { kind: 'answered', text: 'ok' } });
      expect(await followFor(log, 'r', 2_000)).toEqual({ seen: [0, 1, 2], ended: true });
    } finally {
      await log.close();
    }
  });

  it('a queued run with no trace yet is waited for, and followed once it runs', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('follow-queued');
    const registry = new RedisRunRegistry({ redis, prefix });
    const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
    try {
      await registry.create(queuedRecord('later', request, 1));
      const stop = new AbortController();
      const seen: number[] = [];
      const following = (async () => {
        for await (const next of log.follow('later', -1, stop.signal)) seen.push(next.seq);
        return !stop.signal.aborted;
      })();
      await sleep(100);
      expect(seen).toEqual([]);
      await registry.update('later', { status: 'running' });
      await log.append('later', [event('later', 0), event('later', 1)]);
      await registry.update('later', { status: 'ended', outcome: { kind: 'answered', text: 'ok' } });
      await log.end('later');
      const timer = setTimeout(() => stop.abort(), 5_000);
      expect(await following).toBe(true);
      clearTimeout(timer);
      expect(seen).toEqual([0, 1]);
    } finally {
      await log.close();
    }
  });
});
