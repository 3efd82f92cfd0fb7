import fc from 'fast-check';
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

function events(runId: string, from: number, count: number): TraceEvent[] {
  return Array.from(
    { length: count },
    (_, index) => ({ v: 1, runId, seq: from + index, at: 0, type: 'step-start' }) as unknown as TraceEvent,
  );
}

// A follower reads once per notice and trusts the notices for the rest: with the poll set to a
// minute, a wake-up it missed shows as a follower that never finishes (the test's deadline), not as a
// slow one. Batches cross the follower's page (500) so a full page is read past.
describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
  'RedisRunEventLog.follow under concurrent appends',
  () => {
    it('every follower gets every event after its cursor once, in order, and stops at the end', async () => {
      if (!redis) throw new Error('no redis');
      const client = redis;
      let round = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              size: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom(499, 500, 501, 1200)),
              pauseMs: fc.integer({ min: 0, max: 3 }),
            }),
            { minLength: 1, maxLength: 12 },
          ),
          fc.array(fc.integer({ min: -1, max: 40 }), { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 1, max: 7 }),
          async (batches, cursors, slowEvery) => {
            round += 1;
            const log = new RedisRunEventLog({
              redis: client,
              prefix: uniquePrefix('follow'),
              pollMs: 60_000,
            });
            const runId = `run-${round}`;
            const stop = new AbortController();
            const deadline = setTimeout(() => stop.abort(), 10_000);
            try {
              const followers = cursors.map(async (cursor) => {
                const seen: number[] = [];
                for await (const event of log.follow(runId, cursor, stop.signal)) {
                  seen.push(event.seq);
                  // A consumer that takes its time (a page writing to a slow client): notices land
                  // while the follower is not waiting for one.
                  if (event.seq % slowEvery === 0) await sleep(1);
                }
                return { cursor, seen };
              });
              let next = 0;
              for (const batch of batches) {
                await log.append(runId, events(runId, next, batch.size));
                next += batch.size;
                if (batch.pauseMs > 0) await sleep(batch.pauseMs);
              }
              await log.end(runId);
              for (const { cursor, seen } of await Promise.all(followers)) {
                const from = Math.max(0, cursor + 1);
                expect(stop.signal.aborted, 'a follower missed a notice and waited for its poll').toBe(false);
                expect(seen).toEqual(
                  Array.from({ length: Math.max(0, next - from) }, (_, index) => from + index),
                );
              }
            } finally {
              clearTimeout(deadline);
              await log.close();
            }
          },
        ),
        { numRuns: 25, seed: 20261203 },
      );
    }, 120_000);
  },
);
