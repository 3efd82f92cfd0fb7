import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet } from '../src/fleet/run-fleet.js';
import { connectTestRedis, redisUrl } from './support/redis.js';

const workerScript = fileURLToPath(new URL('../dist/fleet/fleet-worker.js', import.meta.url));
let available = false;
beforeAll(async () => {
  const redis = await connectTestRedis();
  available = redis !== undefined;
  redis?.disconnect();
});
afterAll(() => {});

describe('the postmortem, replayed with real processes (smaller fleet)', () => {
  it('reins makes one attempt per poisoned item, enriches every healthy one, dead-letters every poisoned one, within budget', {
    timeout: 240_000,
  }, async ({ skip }) => {
    if (!available) return skip();
    const report = await runFleet({
      workerScript,
      redisUrl,
      records: 110,
      poisoned: 44,
      workers: 4,
      concurrency: 2,
      outageMs: 2_000,
    });
    expect(report.naive.attemptsPerPoisonedItem).toBe(75);
    expect(report.naive.enriched).toBe(66);
    expect(report.reins).toMatchObject({
      attemptsPerPoisonedItem: 1,
      enriched: 66,
      deadLettered: 44,
      budgetViolations: 0,
    });
    expect(report.reins.totalAttempts).toBe(110);
    // The outage: the shared breaker opens once for the whole fleet; failed probes re-open it.
    expect(report.outage.reins.breakerOpens).toBe(1);
    expect(report.outage.reins.budgetViolations).toBe(0);
    // Items that met the open breaker went back on the queue: after the outage, all of them got done.
    expect(report.outage.reins.enriched).toBe(110);
  });
});
