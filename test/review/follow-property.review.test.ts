import fc from 'fast-check';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ev = (runId: string, seq: number, note: string) =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1, note }) as unknown as TraceEvent;

const noteArb = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom('\n', '\u2028\u2029', '\ud800', 'e5\n{"seq":99}', '\r\n\u0000') },
  // around the 8 K-unit carry limit: one or two of these make a batch just under or over it
  { weight: 1, arbitrary: fc.integer({ min: 3_800, max: 4_200 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 7_900, max: 8_200 }).map((n) => 'y'.repeat(n)) },
);

const scenario = fc.record({
  batches: fc.array(fc.array(noteArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 }),
  followers: fc.array(fc.record({ startAt: fc.nat(8), afterOffset: fc.integer({ min: -3, max: 3 }) }), {
    minLength: 1,
    maxLength: 4,
  }),
  delays: fc.array(fc.nat(4), { minLength: 8, maxLength: 8 }),
  conflictAt: fc.option(fc.nat(8)),
  endMode: fc.constantFrom('marker', 'record-then-marker', 'record-only', 'record-expired'),
});

describe('follow: property over mixed batches, several followers on one log', () => {
  it('every follower yields exactly the stream after its afterSeq, in order, and stops', async () => {
    if (!redis) throw new Error('no redis');
    const r = redis;
    const prefix = uniquePrefix('follow-prop');
    const log = new RedisRunEventLog({ redis: r, prefix, pollMs: 400 });
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          const runId = `run${n++}`;
          await r.hset(`${prefix}:run:${runId}`, 'status', 'running');
          await r.set(`${prefix}:run-id:${runId}`, '1');
          const written: TraceEvent[] = [];
          const followers: {
            after: number;
            seen: TraceEvent[];
            done: Promise<boolean>;
            stop: AbortController;
          }[] = [];
          const start = (after: number) => {
            const stop = new AbortController();
            const seen: TraceEvent[] = [];
            const done = (async () => {
              for await (const e of log.follow(runId, after, stop.signal)) seen.push(e);
              return !stop.signal.aborted;
            })();
            followers.push({ after, seen, done, stop });
          };
          let seq = 0;
          for (let b = 0; b <= s.batches.length; b++) {
            for (const f of s.followers) if (f.startAt === b) start(seq - 1 + f.afterOffset);
            if (s.conflictAt === b && seq > 0) {
              // Another writer's batch at a seq already taken: refused, no notice.
              await expect(log.append(runId, [ev(runId, Math.max(0, seq - 1), 'forged')])).rejects.toThrow();
            }
            const notes = s.batches[b];
            if (!notes) break;
            const batch = notes.map((note, i) => ev(runId, seq + i, note));
            await log.append(runId, batch);
            written.push(...batch);
            seq += batch.length;
            await sleep(s.delays[b] ?? 0);
          }
          if (s.endMode !== 'marker') await r.hset(`${prefix}:run:${runId}`, 'status', 'ended');
          if (s.endMode === 'record-expired') await r.del(`${prefix}:run:${runId}`);
          if (s.endMode === 'marker' || s.endMode === 'record-then-marker') await log.end(runId);
          const timer = setTimeout(() => {
            for (const f of followers) f.stop.abort();
          }, 8_000);
          const ended = await Promise.all(followers.map((f) => f.done));
          clearTimeout(timer);
          const expected = JSON.parse(JSON.stringify(written)) as TraceEvent[];
          for (const [i, f] of followers.entries()) {
            expect(ended[i]).toBe(true);
            expect(f.seen).toEqual(expected.filter((e) => e.seq > f.after));
          }
        }),
        { seed: Number(process.env.SEED ?? 20261204), numRuns: Number(process.env.RUNS ?? 40) },
      );
    } finally {
      await log.close();
    }
  });
});
