import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runIdempotencyBench } from '../src/fleet/run-idempotency.js';
import { connectTestPostgres, postgresUrl } from './support/postgres.js';
import { connectTestRedis, redisUrl } from './support/redis.js';

const workerScript = fileURLToPath(new URL('../dist/fleet/charge-worker.js', import.meta.url));
let available = false;
beforeAll(async () => {
  const redis = await connectTestRedis();
  const pool = await connectTestPostgres();
  available = redis !== undefined && pool !== undefined;
  redis?.disconnect();
  await pool?.end();
});

describe('idempotent charges survive SIGKILL (real processes, every store)', () => {
  it('no duplicate and no lost charge with reconcile; without it, the crash window shows', {
    timeout: 300_000,
  }, async ({ skip }) => {
    if (!available) return skip();
    const report = await runIdempotencyBench({
      workerScript,
      redisUrl,
      postgresUrl,
      workers: 4,
      operations: 40,
      maxKills: 6,
      killEveryMs: 300,
      throughputMs: 300,
    });
    for (const [store, figures] of Object.entries(report.stores)) {
      expect(figures, store).toMatchObject({ operations: 160, duplicates: 0, lost: 0 });
      expect(figures.kills, store).toBeGreaterThan(0);
    }
    expect(report.withoutReconcile.lost).toBe(0);
    // Late answers alone (5 % of charges) make retries without reconcile charge twice.
    expect(report.withoutReconcile.duplicates).toBeGreaterThan(0);
  });
});
