import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importPeers } from '../errors/missing-peer.js';
import { PostgresIdempotencyStore } from '../postgres/postgres-idempotency-store.js';
import { SqliteIdempotencyStore } from '../sqlite/sqlite-idempotency-store.js';
import { randomInt, seededRandom } from '../testing/seeded-random.js';
import { startPaymentsService } from './payments-service.js';

export type StoreName = 'sqlite' | 'postgres' | 'redis';

export interface IdempotencyFigures {
  operations: number;
  effects: number;
  /** Operations charged more than once. */
  duplicates: number;
  /** Operations never charged. */
  lost: number;
  kills: number;
  /** Logical charges completed per second, HTTP, faults and kills included. */
  opsPerSecond: number;
  /** Reserve+complete pairs per second from 12 processes, 16 in flight each, no HTTP. */
  reserveCompletePerSecond: number;
  /** The same with durability relaxed to survive a killed process but not an OS crash. */
  reserveCompletePerSecondRelaxed?: number;
}

export interface IdempotencyReport {
  workers: number;
  operationsPerWorker: number;
  stores: Partial<Record<StoreName, IdempotencyFigures>>;
  /** The same run on SQLite without the reconcile hook: the crash window it closes. */
  withoutReconcile: IdempotencyFigures;
  /** Calls per second with no store at all, from the same 12 processes. */
  unprotectedPerSecond: number;
}

export interface IdempotencyBenchOptions {
  workerScript: string;
  workers?: number;
  operations?: number;
  stores?: StoreName[];
  redisUrl?: string;
  postgresUrl?: string;
  /** Kill and restart a random worker every this many ms (randomized ±50 %). @default 400 */
  killEveryMs?: number;
  maxKills?: number;
  throughputMs?: number;
  seed?: number;
  onProgress?: (message: string) => void;
}

/**
 * 12 worker processes each performing N logical charges through an idempotent tool against a
 * payments service that performs every request, with faults injected and workers SIGKILLed at
 * random and restarted until their work is done; then the ledger is checked for duplicates and
 * losses. Once per store, and once without `reconcile`.
 */
export async function runIdempotencyBench(options: IdempotencyBenchOptions): Promise<IdempotencyReport> {
  const workers = options.workers ?? 12;
  const operations = options.operations ?? 1_000;
  const redisUrl = options.redisUrl ?? 'redis://127.0.0.1:6379';
  const postgresUrl = options.postgresUrl ?? 'postgres://postgres@127.0.0.1:5432/test';
  const progress = options.onProgress ?? (() => {});
  const [ioredis, pg] = await importPeers('reins bench idempotency', [
    { name: 'ioredis', range: '^5', load: () => import('ioredis') },
    { name: 'pg', range: '^8', load: () => import('pg') },
  ]);
  const random = seededRandom(options.seed ?? 2026);
  const dir = mkdtempSync(join(tmpdir(), 'reins-idem-bench-'));
  const pool = new pg.default.Pool({ connectionString: postgresUrl, max: 2 });
  const redis = new ioredis.Redis(redisUrl);
  try {
    const prepare = async (store: StoreName, name: string) => {
      const table = `reins_idem_bench_${name.replace(/[^A-Za-z0-9]/g, '_')}_${process.pid}`;
      const sqlitePath = join(dir, `${name}.db`);
      if (store === 'sqlite') new SqliteIdempotencyStore({ database: sqlitePath }).close();
      if (store === 'postgres') {
        await pool.query(`DROP TABLE IF EXISTS ${table}`);
        await new PostgresIdempotencyStore({ pool, table }).migrate();
      }
      return { table, sqlitePath, prefix: `reins-idem-bench:${name}:${process.pid}:${Date.now()}` };
    };

    const spawnWorker = (
      config: Record<string, unknown>,
    ): {
      child: ChildProcess;
      done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>;
    } => {
      const child = spawn(process.execPath, [options.workerScript, JSON.stringify(config)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>(
        (resolve, reject) => {
          child.on('error', reject);
          child.on('exit', (code, signal) => {
            if (code !== 0 && signal === null)
              reject(new Error(`charge worker exited ${code}: ${stderr.slice(0, 2_000)}`));
            else resolve({ code, signal, stdout });
          });
        },
      );
      return { child, done };
    };

    const throughput = async (store: StoreName | 'none', name: string, relaxed = false): Promise<number> => {
      const setup = await prepare(
        store === 'none' ? 'sqlite' : store,
        `${name}-tp${relaxed ? '-relaxed' : ''}`,
      );
      const runs = Array.from({ length: workers }, (_, worker) =>
        spawnWorker({
          ...setup,
          worker,
          operations: 0,
          store: store === 'none' ? 'sqlite' : store,
          postgresUrl,
          redisUrl,
          serviceUrl: '',
          progressFile: '',
          reconcile: false,
          leaseMs: 1_000,
          throughputMs: options.throughputMs ?? 3_000,
          unprotected: store === 'none',
          relaxed,
        }),
      );
      const results = await Promise.all(runs.map((run) => run.done));
      const pairs = results.reduce((sum, result) => sum + Number(result.stdout.trim() || 0), 0);
      return pairs / ((options.throughputMs ?? 3_000) / 1_000);
    };

    const run = async (store: StoreName, reconcile: boolean): Promise<IdempotencyFigures> => {
      const name = `${store}${reconcile ? '' : '-noreconcile'}`;
      progress(`idempotency: ${name}`);
      const setup = await prepare(store, name);
      const service = await startPaymentsService({ seed: randomInt(random, 1, 1e6) });
      const configFor = (worker: number) => ({
        ...setup,
        worker,
        operations,
        store,
        postgresUrl,
        redisUrl,
        serviceUrl: service.url,
        progressFile: join(dir, `${name}-w${worker}.progress`),
        reconcile,
        leaseMs: 1_000,
        throughputMs: 0,
        unprotected: false,
      });
      const started = Date.now();
      let kills = 0;
      const live = new Map<number, ChildProcess>();
      const finished = new Set<number>();
      const supervise = async (worker: number): Promise<void> => {
        while (!finished.has(worker)) {
          const { child, done } = spawnWorker(configFor(worker));
          live.set(worker, child);
          const exit = await done;
          live.delete(worker);
          if (exit.signal === null) finished.add(worker);
        }
      };
      const supervisors = Array.from({ length: workers }, (_, worker) => supervise(worker));
      const killer = (async () => {
        const every = options.killEveryMs ?? 400;
        while (finished.size < workers && kills < (options.maxKills ?? 40)) {
          await new Promise((resolve) => setTimeout(resolve, every * (0.5 + random())));
          const candidates = [...live.entries()];
          if (candidates.length === 0) continue;
          const [, child] = candidates[randomInt(random, 0, candidates.length - 1)] as [number, ChildProcess];
          if (child.kill('SIGKILL')) kills++;
        }
      })();
      await Promise.all(supervisors);
      await killer;
      const wallMs = Date.now() - started;
      await service.close();
      const counts = new Map<string, number>();
      for (const entry of service.ledger) counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
      let lost = 0;
      for (let worker = 0; worker < workers; worker++)
        for (let n = 0; n < operations; n++) if (!counts.has(`w${worker}-op${n}`)) lost++;
      return {
        operations: workers * operations,
        effects: service.ledger.length,
        duplicates: [...counts.values()].filter((count) => count > 1).length,
        lost,
        kills,
        opsPerSecond: (workers * operations) / (wallMs / 1_000),
        reserveCompletePerSecond: reconcile ? await throughput(store, name) : 0,
        ...(reconcile && store !== 'redis'
          ? { reserveCompletePerSecondRelaxed: await throughput(store, name, true) }
          : {}),
      };
    };

    const stores: IdempotencyReport['stores'] = {};
    for (const store of options.stores ?? ['sqlite', 'postgres', 'redis'])
      stores[store] = await run(store, true);
    const withoutReconcile = await run('sqlite', false);
    progress('idempotency: unprotected baseline');
    const unprotectedPerSecond = await throughput('none', 'unprotected');
    return { workers, operationsPerWorker: operations, stores, withoutReconcile, unprotectedPerSecond };
  } finally {
    await pool.end();
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}
