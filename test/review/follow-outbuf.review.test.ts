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
const ev = (runId: string, seq: number, note: string) =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1, note }) as unknown as TraceEvent;

describe('carried notices and the shared subscriber output buffer', () => {
  // Review finding F3: with 60 KB carried notices, a subscriber that stalled was closed by Redis (its
  // pubsub output buffer limit) and every follower on it waited for its poll. Now a batch over 8 K
  // units goes by the stream (a few-byte notice), and a subscriber closed anyway (carried batches
  // of a typical size, enough of them) makes every follower read the stream as soon as it is back.
  it('big batches while a subscriber stalls: its notices stay small and it is not closed', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('outbuf');
    const subscriber = new Redis(redisUrl);
    let closes = 0;
    subscriber.on('close', () => closes++);
    const log = new RedisRunEventLog({ redis, subscriber, prefix, pollMs: 60_000 });
    const runs = Array.from({ length: 60 }, (_, i) => `r${i}`);
    const stops = runs.map(() => new AbortController());
    const seen = runs.map(() => 0);
    const follows = runs.map((runId, i) =>
      (async () => {
        for await (const _ of log.follow(runId, -1, (stops[i] as AbortController).signal)) seen[i]!++;
      })(),
    );
    try {
      await sleep(300);
      // The service process stalls for a moment (GC, a CPU-bound request): its socket is not read.
      (subscriber as unknown as { stream: { pause(): void; resume(): void } }).stream.pause();
      const note = 'z'.repeat(60_000);
      const appends: Promise<void>[] = [];
      for (let step = 0; step < 15; step++)
        for (const runId of runs) appends.push(log.append(runId, [ev(runId, step, note)]));
      await Promise.all(appends);
      await sleep(500);
      (subscriber as unknown as { stream: { resume(): void } }).stream.resume();
      const deadline = Date.now() + 5_000;
      while (!seen.every((n) => n === 15) && Date.now() < deadline) await sleep(50);
      expect(closes).toBe(0);
      expect(seen.every((n) => n === 15)).toBe(true);
    } finally {
      for (const stop of stops) stop.abort();
      await Promise.all(follows);
      await log.close();
      subscriber.disconnect();
      for (const runId of runs) await redis.unlink(`${prefix}:events:${runId}`);
    }
  }, 30_000);

  it('a subscriber Redis closed for its buffer: every follower reads the stream once it is back, not at its poll', async () => {
    if (!redis) throw new Error('no redis');
    const prefix = uniquePrefix('outbuf-closed');
    const subscriber = new Redis(redisUrl);
    let closes = 0;
    subscriber.on('close', () => closes++);
    const log = new RedisRunEventLog({ redis, subscriber, prefix, pollMs: 60_000 });
    const runs = Array.from({ length: 60 }, (_, i) => `r${i}`);
    const steps = 130;
    const stops = runs.map(() => new AbortController());
    const seen = runs.map(() => 0);
    const follows = runs.map((runId, i) =>
      (async () => {
        for await (const _ of log.follow(runId, -1, (stops[i] as AbortController).signal)) seen[i]!++;
      })(),
    );
    try {
      await sleep(300);
      (subscriber as unknown as { stream: { pause(): void; resume(): void } }).stream.pause();
      // 60 runs x 130 steps of ~7 KB, each carried: ~55 MB of notices, past the 32 MB hard limit.
      const note = 'z'.repeat(7_000);
      for (let step = 0; step < steps; step++)
        await Promise.all(runs.map((runId) => log.append(runId, [ev(runId, step, note)])));
      await sleep(500);
      (subscriber as unknown as { stream: { resume(): void } }).stream.resume();
      const deadline = Date.now() + 10_000;
      while (!seen.every((n) => n === steps) && Date.now() < deadline) await sleep(50);
      expect(closes).toBeGreaterThan(0);
      expect(seen.every((n) => n === steps)).toBe(true);
    } finally {
      for (const stop of stops) stop.abort();
      await Promise.all(follows);
      await log.close();
      subscriber.disconnect();
      for (const runId of runs) await redis.unlink(`${prefix}:events:${runId}`);
    }
  }, 60_000);
});
