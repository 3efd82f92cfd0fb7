/**
 * One worker of the idempotency benchmark: performs its logical charges through an idempotent
 * tool, retrying as a caller would, and records progress so a restart after SIGKILL continues.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { z } from 'zod';
import { type IdempotencyStore, idempotent } from '../idempotency/index.js';
import { PostgresIdempotencyStore } from '../postgres/postgres-idempotency-store.js';
import { RedisIdempotencyStore } from '../redis/redis-idempotency-store.js';
import { sleep } from '../resilience/sleep.js';
import { SqliteIdempotencyStore } from '../sqlite/sqlite-idempotency-store.js';
import { defineTool } from '../tools/define-tool.js';
import { isToolError } from '../tools/tool-error.js';

interface ChargeWorkerConfig {
  worker: number;
  operations: number;
  store: 'sqlite' | 'postgres' | 'redis';
  sqlitePath: string;
  postgresUrl: string;
  table: string;
  redisUrl: string;
  prefix: string;
  serviceUrl: string;
  progressFile: string;
  reconcile: boolean;
  leaseMs: number;
  /** Measure reserve+complete pairs per second for this long instead of charging (0: charge). */
  throughputMs: number;
  /** With throughputMs: skip the store, as the unprotected baseline. */
  unprotected: boolean;
  /** Trade power-loss durability for throughput (SQLite synchronous=NORMAL, PostgreSQL synchronous_commit=off). */
  relaxed?: boolean;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChargeWorkerConfig;
let close = async () => {};
let store: IdempotencyStore;
if (config.store === 'sqlite') {
  const sqlite = new SqliteIdempotencyStore({
    database: config.sqlitePath,
    synchronous: config.relaxed ? 'normal' : 'full',
  });
  store = sqlite;
  close = async () => sqlite.close();
} else if (config.store === 'postgres') {
  const pool = new pg.Pool({ connectionString: config.postgresUrl, max: 2 });
  // Relaxed: commits do not wait for the WAL flush (a PostgreSQL crash may lose the last ~0.6 s).
  if (config.relaxed) pool.on('connect', (client) => void client.query('SET synchronous_commit = off'));
  store = new PostgresIdempotencyStore({ pool, table: config.table });
  close = () => pool.end();
} else {
  const redis = new Redis(config.redisUrl, { enableAutoPipelining: true });
  store = new RedisIdempotencyStore({ redis, key: config.prefix });
  close = async () => redis.disconnect();
}

const charge = defineTool({
  name: 'charge',
  description: 'Charge a customer.',
  effect: 'write',
  input: z.object({ idempotencyKey: z.string(), amountCents: z.number().int() }),
  execute: async ({ idempotencyKey, amountCents }) => {
    // The key goes downstream with the effect, so reconcile can ask about it.
    const response = await fetch(`${config.serviceUrl}/charge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: idempotencyKey, amountCents }),
      signal: AbortSignal.timeout(150),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    return (await response.json()) as { chargeId: string };
  },
});
const tool = idempotent(charge, {
  store,
  key: { field: 'idempotencyKey' },
  leaseMs: config.leaseMs,
  ...(config.reconcile
    ? {
        reconcile: async (key: string) => {
          const found = (await (
            await fetch(`${config.serviceUrl}/charges/${encodeURIComponent(key.replace(/^charge:/, ''))}`)
          ).json()) as { exists: boolean; chargeId?: string };
          return found.exists
            ? { happened: true as const, result: { chargeId: found.chargeId } }
            : { happened: false as const };
        },
      }
    : {}),
});
const context = {
  signal: new AbortController().signal,
  actor: undefined,
  runId: 'bench',
  step: 1,
  callId: 'c',
};

if (config.throughputMs > 0) {
  // Sixteen operations in flight per process, as a busy worker has: what a shared store must carry.
  const until = Date.now() + config.throughputMs;
  let pairs = 0;
  const noop = async () => ({ ok: true });
  await Promise.all(
    Array.from({ length: 16 }, async (_, lane) => {
      for (let i = 0; Date.now() < until; i++) {
        const key = `tp:${config.worker}:${lane}:${i}`;
        if (config.unprotected) await noop();
        else {
          const token = `t${lane}-${i}`;
          await store.reserve({
            key,
            fingerprint: 'f',
            token,
            nowMs: Date.now(),
            leaseMs: 30_000,
            retentionMs: 3_600_000,
          });
          await store.complete({
            key,
            token,
            result: { ok: true },
            nowMs: Date.now(),
            retentionMs: 3_600_000,
          });
        }
        pairs++;
      }
    }),
  );
  process.stdout.write(`${pairs}\n`);
  await close();
  process.exit(0);
}

const start = existsSync(config.progressFile) ? Number(readFileSync(config.progressFile, 'utf8')) : 0;
for (let n = start; n < config.operations; n++) {
  const input = { idempotencyKey: `w${config.worker}-op${n}`, amountCents: 100 + n };
  while (true) {
    try {
      await tool.execute(input, context);
      break;
    } catch (error) {
      // A caller that keeps retrying the same logical operation with the same key until it is done.
      const wait = isToolError(error) && error.code === 'idempotency_key_in_use' ? 20 : 5;
      if (isToolError(error) && error.retry === 'no') throw error;
      await sleep(wait);
    }
  }
  writeFileSync(config.progressFile, String(n + 1));
}
await close();
