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

function events(runId: string, from: number, count: number, note = ''): TraceEvent[] {
  return Array.from(
    { length: count },
    (_, index) =>
      ({ v: 1, runId, seq: from + index, at: 0, type: 'step-start', note }) as unknown as TraceEvent,
  );
}

/** A client of its own whose XRANGE calls are counted: the follower's reads. */
function countingClient(): { client: Redis; reads: () => number } {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let reads = 0;
  const original = client.xrange.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as unknown as { xrange: (...args: unknown[]) => Promise<unknown> }).xrange = (...args) => {
    reads++;
    return original(...args);
  };
  return { client, reads: () => reads };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Follows until the end, collecting seqs; the writer runs `write` once the follower's first read is in. */
async function follow(log: RedisRunEventLog, runId: string, write: () => Promise<void>) {
  const stop = new AbortController();
  const deadline = setTimeout(() => stop.abort(), 10_000);
  const seen: number[] = [];
  const notes: string[] = [];
  const following = (async () => {
    for await (const event of log.follow(runId, -1, stop.signal)) {
      seen.push(event.seq);
      notes.push((event as unknown as { note: string }).note);
    }
  })();
  await sleep(30);
  await write();
  await following;
  clearTimeout(deadline);
  return { seen, notes, timedOut: stop.signal.aborted };
}

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
  'RedisRunEventLog notices that carry their batch',
  () => {
    it('a caught-up follower takes small batches from the notices, reading only at its start and at the end', async () => {
      if (!redis) throw new Error('no redis');
      const writer = redis;
      const prefix = uniquePrefix('carried');
      const counted = countingClient();
      const log = new RedisRunEventLog({ redis: counted.client, prefix, pollMs: 60_000 });
      const writerLog = new RedisRunEventLog({ redis: writer, prefix });
      try {
        const { seen, timedOut } = await follow(log, 'run-1', async () => {
          for (let step = 0; step < 10; step++) await writerLog.append('run-1', events('run-1', step * 3, 3));
          await writerLog.end('run-1');
        });
        expect(timedOut).toBe(false);
        expect(seen).toEqual(Array.from({ length: 30 }, (_, index) => index));
        // One read when it starts, one after the end notice: ten appends cost no read.
        expect(counted.reads()).toBe(2);
      } finally {
        await log.close();
        counted.client.disconnect();
      }
    });

    it('a batch too large to carry is read from the stream, in order, once', async () => {
      if (!redis) throw new Error('no redis');
      const prefix = uniquePrefix('carried-large');
      const counted = countingClient();
      const log = new RedisRunEventLog({ redis: counted.client, prefix, pollMs: 60_000 });
      const writerLog = new RedisRunEventLog({ redis, prefix });
      const big = 'x'.repeat(9 * 1024);
      try {
        const { seen, timedOut } = await follow(log, 'run-2', async () => {
          await writerLog.append('run-2', events('run-2', 0, 2));
          await writerLog.append('run-2', events('run-2', 2, 1, big));
          await writerLog.append('run-2', events('run-2', 3, 2));
          await writerLog.end('run-2');
        });
        expect(timedOut).toBe(false);
        expect(seen).toEqual([0, 1, 2, 3, 4]);
        expect(counted.reads()).toBeGreaterThanOrEqual(3);
      } finally {
        await log.close();
        counted.client.disconnect();
      }
    });

    it('forged, out-of-order and malformed notices send the follower to the stream: nothing skipped, nothing twice', async () => {
      if (!redis) throw new Error('no redis');
      const prefix = uniquePrefix('carried-forged');
      const log = new RedisRunEventLog({ redis, prefix, pollMs: 60_000 });
      const channel = `${prefix}:events-notice:run-3`;
      const writerLog = new RedisRunEventLog({ redis, prefix });
      try {
        const { seen, notes, timedOut } = await follow(log, 'run-3', async () => {
          await writerLog.append('run-3', events('run-3', 0, 2));
          // A notice claiming events far ahead (a gap: it must read, and find only what is there).
          await redis?.publish(channel, `e0.9\n${JSON.stringify(events('run-3', 9, 1)[0])}`);
          // A notice whose event does not carry the seq it claims.
          await redis?.publish(channel, `e0.2\n${JSON.stringify(events('run-3', 7, 1)[0])}`);
          // Not JSON at all, and JSON that is not an event.
          await redis?.publish(channel, 'e0.2\n{not json');
          await redis?.publish(channel, 'e0.2\n42');
          await redis?.publish(channel, 'e');
          // Well formed, but from another database (pub/sub channels span databases).
          await redis?.publish(channel, `e7.2\n${JSON.stringify(events('run-3', 2, 1, 'db7')[0])}`);
          await writerLog.append('run-3', events('run-3', 2, 3));
          await writerLog.end('run-3');
        });
        expect(timedOut).toBe(false);
        expect(seen).toEqual([0, 1, 2, 3, 4]);
        // Only what the stream holds: nothing from the forged notices.
        expect(notes).toEqual(['', '', '', '', '']);
      } finally {
        await log.close();
      }
    });
  },
);

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')('a follower whose consumer does not keep up', () => {
  it('holds a bounded number of notices and still yields every event once, in order', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('carried-slow');
    const counted = countingClient();
    const log = new RedisRunEventLog({ redis: counted.client, prefix, pollMs: 60_000 });
    const writerLog = new RedisRunEventLog({ redis, prefix });
    const stop = new AbortController();
    const deadline = setTimeout(() => stop.abort(), 15_000);
    try {
      const seen: number[] = [];
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const following = (async () => {
        for await (const event of log.follow('slow', -1, stop.signal)) {
          seen.push(event.seq);
          // The consumer stalls on its first event while 200 more batches are appended.
          if (event.seq === 0) await held;
        }
      })();
      await sleep(30);
      await writerLog.append('slow', events('slow', 0, 1));
      await sleep(50);
      for (let step = 1; step <= 200; step++) await writerLog.append('slow', events('slow', step, 1));
      await sleep(100);
      const readsBefore = counted.reads();
      release();
      while (seen.length < 201 && !stop.signal.aborted) await sleep(10);
      // The 200 notices held while it stalled overflowed: it read the stream for them (before the end).
      expect(counted.reads()).toBeGreaterThan(readsBefore);
      await writerLog.end('slow');
      await following;
      expect(stop.signal.aborted).toBe(false);
      expect(seen).toEqual(Array.from({ length: 201 }, (_, index) => index));
    } finally {
      clearTimeout(deadline);
      await log.close();
      counted.client.disconnect();
    }
  });
});
