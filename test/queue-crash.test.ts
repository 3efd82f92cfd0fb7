import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BullmqRunQueue } from '../src/bullmq/bullmq-run-queue.js';
import { randomInt, seededRandom } from '../src/testing/seeded-random.js';
import { connectTestRedis, redisUrl, uniquePrefix } from './support/redis.js';

// 200 runs of 6 steps on 4 `reins worker` processes; about one run in ten SIGKILLs its worker on
// its first attempt at a seeded step and point (before the model call, before or after the
// effect), taking the worker's other runs down with it. BullMQ's stalled-job check hands the jobs
// to the surviving workers, which resume from the shared checkpoint store.
const bin = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const agentsModule = fileURLToPath(new URL('./fixtures/queue-crash-agents.mjs', import.meta.url));
const postgresUrl = process.env['REINS_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const runs = 200;
const steps = 6;
const points = ['before-model', 'before-effect', 'after-effect'] as const;

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

async function postgresReachable(): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${postgresUrl} (${error instanceof Error ? error.message : String(error)}). Start one or set REINS_TEST_POSTGRES_URL.`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

async function crashFleet(store: 'redis' | 'postgres', seed: number) {
  const prefix = uniquePrefix(`queue-crash-${store}`).replaceAll(':', '-');
  const random = seededRandom(seed);
  // Unique per test run: the PostgreSQL checkpoint table outlives it, and an ended run resumes to its old outcome.
  const tag = prefix.slice(prefix.lastIndexOf('-') + 1);
  const ids = Array.from({ length: runs }, (_, i) => `${store}-${seed}-${tag}-${i}`);
  const plan: Record<string, { step: number; point: (typeof points)[number] }> = {};
  for (const id of ids)
    if (random() < 1 / 10)
      plan[id] = { step: randomInt(random, 1, steps - 1), point: points[randomInt(random, 0, 2)]! };
  const env = {
    ...process.env,
    QUEUE_TEST_PREFIX: prefix,
    QUEUE_TEST_CRASH_PLAN: JSON.stringify(plan),
  };
  const args = [
    bin,
    'worker',
    '--agents',
    agentsModule,
    '--checkpoint',
    store,
    '--redis',
    redisUrl,
    '--postgres',
    postgresUrl,
    '--prefix',
    prefix,
    '--queue',
    'runs',
    '--concurrency',
    '8',
    '--lock-duration-ms',
    '2000',
    '--stalled-interval-ms',
    '500',
    '--quiet',
  ];
  const workers = new Set<ChildProcess>();
  let kills = 0;
  let done = false;
  const start = () =>
    new Promise<void>((ready, failed) => {
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      let stderr = '';
      child.stderr?.on('data', (chunk) => {
        stderr += String(chunk);
      });
      workers.add(child);
      child.on('message', () => ready());
      child.on('exit', (code, signal) => {
        workers.delete(child);
        if (signal === 'SIGKILL') {
          kills++;
          if (!done) void start();
        } else if (!done) failed(new Error(`worker exited ${code ?? signal}: ${stderr}`));
      });
    });
  await Promise.all(Array.from({ length: 4 }, start));
  const queue = new BullmqRunQueue({ redis: redisUrl, prefix, queueName: 'runs' });
  const startedAt = Date.now();
  for (const runId of ids) await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId });
  const deadline = startedAt + 120_000;
  let records = await Promise.all(ids.map((id) => queue.registry.get(id)));
  while (Date.now() < deadline && records.some((record) => record?.status !== 'ended')) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    records = await Promise.all(ids.map((id) => queue.registry.get(id)));
  }
  const wallMs = Date.now() - startedAt;
  console.log(
    `${store}: ${records.filter((record) => record?.status === 'ended').length}/${runs} ended after ${wallMs} ms`,
  );
  done = true;
  const exits = [...workers].map((child) => new Promise((resolve) => child.once('exit', resolve)));
  for (const child of workers) child.kill('SIGTERM');
  const stopping = setTimeout(() => {
    for (const child of workers) child.kill('SIGKILL');
  }, 15_000);
  await Promise.all(exits);
  clearTimeout(stopping);
  // Side effects: one counter per (run, step) key.
  const counts = await (redis as Redis).mget(
    ids.flatMap((id) => Array.from({ length: steps - 1 }, (_, step) => `${prefix}:effect:${id}:${step + 1}`)),
  );
  const traces = await Promise.all(ids.map((id) => queue.events.read(id, -1)));
  await queue.close();
  return { ids, plan, records, counts, traces, kills, wallMs, prefix };
}

describe.each(['redis', 'postgres'] as const)(
  '200 queued runs, 4 worker processes, SIGKILLs (%s checkpoints)',
  (store) => {
    it('every run ends answered; 0 lost, 0 duplicated effects; every trace has no gap and no duplicate seq', {
      timeout: 180_000,
    }, async ({ skip }) => {
      if (!redis) return skip();
      expect(existsSync(bin), 'run `npm run build` first (npm test does)').toBe(true);
      if (store === 'postgres') await postgresReachable();
      const result = await crashFleet(store, store === 'redis' ? 20261203 : 20261204);
      const { records, counts, traces, kills, plan } = result;
      const lost = records.filter((record) => record?.status !== 'ended');
      expect(lost.map((record) => record?.runId ?? 'missing')).toEqual([]);
      expect(records.filter((record) => record?.outcome?.kind !== 'answered').map((r) => r?.outcome)).toEqual(
        [],
      );
      const numbers = counts.map(Number);
      const keys = result.ids.flatMap((id) =>
        Array.from({ length: steps - 1 }, (_, step) => `${id}:${step + 1}`),
      );
      const duplicated = keys.filter((_, index) => (numbers[index] ?? 0) > 1);
      if (duplicated.length > 0)
        console.log(
          duplicated
            .map((key) => {
              const runId = key.slice(0, key.lastIndexOf(':'));
              const record = records.find((r) => r?.runId === runId);
              const trace = traces[result.ids.indexOf(runId)] ?? [];
              return `${key} plan=${JSON.stringify(plan[runId])} attempts=${record?.attempts} segments=${trace.filter((e) => e.type === 'run-start').length} results=${JSON.stringify(trace.filter((e) => e.type === 'tool-result').map((e) => [(e as { step?: number }).step, (e as { status?: string }).status]))}`;
            })
            .join('\n'),
        );
      expect(numbers.filter((count) => count > 1)).toEqual([]);
      expect(numbers.filter((count) => count === 0)).toEqual([]);
      for (const trace of traces) {
        expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
        expect(trace.at(-1)?.type).toBe('run-end');
      }
      // The crashes happened and were recovered from.
      expect(kills).toBeGreaterThanOrEqual(Math.min(10, Object.keys(plan).length / 4));
      const resumed = records.filter((record) => (record?.attempts ?? 0) > 1).length;
      expect(resumed).toBeGreaterThanOrEqual(Object.keys(plan).length / 2);
      console.log(
        `${store}: ${runs} runs, ${kills} SIGKILLs, ${resumed} resumed, ${Object.keys(plan).length} planned crashes, ${(result.wallMs / 1000).toFixed(1)} s`,
      );
    });
  },
);
