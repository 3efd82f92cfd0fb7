import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { runQueueBench as RunQueueBench } from '../src/cli/bench-queue.js';

// `reins bench queue` on both engines, small: it must measure real runs (every one answered, none
// twice) and leave no worker process behind. The figures themselves are not asserted (no timed
// assertions in tests); bench/queue.ts records them.
const dist = fileURLToPath(new URL('../dist/cli/bench-queue.js', import.meta.url));

describe.skipIf(process.env['REINS_SKIP_REDIS'] === '1' || process.env['REINS_SKIP_POSTGRES'] === '1')(
  'reins bench queue',
  () => {
    it.each(['bullmq', 'pgboss'] as const)(
      'on %s: every run answered once, figures for each setup',
      {
        timeout: 120_000,
      },
      async (engine) => {
        const { runQueueBench } = (await import(dist)) as { runQueueBench: typeof RunQueueBench };
        const report = await runQueueBench({
          redisUrl: process.env['REINS_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
          engine,
          runs: 20,
          latencyRuns: 5,
          warmupRuns: 10,
          workers: [1, 2],
          concurrency: 4,
        });
        expect(report.engine).toBe(engine);
        expect(report.checkpoint).toBe(engine === 'pgboss' ? 'postgres' : 'redis');
        for (const figures of [
          report.inProcess,
          report.inProcessDurable,
          ...Object.values(report.byWorkers),
        ]) {
          expect(figures).toMatchObject({ runs: 20, lost: 0, duplicates: 0 });
          expect(figures.throughputPerSecond).toBeGreaterThan(0);
          expect(figures.runMs.p50).toBeGreaterThan(0);
          expect(figures.firstEventMs.p50).toBeLessThanOrEqual(figures.runMs.p50);
        }
        expect(Object.keys(report.byWorkers)).toEqual(['1', '2']);
      },
    );
  },
);
