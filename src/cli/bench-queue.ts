import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type CheckpointStore, MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { importPeers } from '../errors/missing-peer.js';
import { quantileOfSorted } from '../eval/quantile.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { InProcessRunQueue } from '../queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../queue/memory-run-registry.js';
import type { RunEventLog, RunQueue, RunRegistry } from '../queue/run-queue.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';

/** Options for `reins bench queue`. */
export interface BenchQueueOptions {
  redisUrl: string;
  /**
   * The job engine: BullMQ on Redis, or pg-boss on PostgreSQL (records, traces and checkpoints in
   * PostgreSQL; Redis only counts the steps' effects, off the timed path). @default 'bullmq'
   */
  engine?: 'bullmq' | 'pgboss';
  /** PostgreSQL for `engine: 'pgboss'`. @default 'postgres://postgres@127.0.0.1:5432/test' */
  postgresUrl?: string;
  /** Runs per throughput measurement. @default 400 */
  runs?: number;
  /** Runs enqueued one at a time for the latency figures. @default 100 */
  latencyRuns?: number;
  /**
   * Untimed runs per process before each configuration is measured (the in-process queue runs
   * this many, N worker processes N times as many), so each process's code is as warm as the
   * in-process contender's. @default 400
   */
  warmupRuns?: number;
  /** Worker process counts. @default [1, 4, 8] */
  workers?: readonly number[];
  /** Runs at once per worker process. @default 16 */
  concurrency?: number;
}

/** One configuration's figures. */
export interface QueueFigures {
  runs: number;
  /** Runs not ended `answered` (lost, or ended some other way). */
  lost: number;
  duplicates: number;
  resumed: number;
  throughputPerSecond: number;
  /** Enqueue to a follower receiving the run's first event, runs enqueued one at a time on idle workers. */
  firstEventMs: { p50: number; p99: number };
  /** Enqueue to a follower receiving the run's `run-end` event, one at a time. */
  runMs: { p50: number; p99: number };
}

/** What `reins bench queue --json` prints: the 4-worker figures at the top, every count under `byWorkers`. */
export interface QueueBenchReport extends QueueFigures {
  workers: number;
  engine: 'bullmq' | 'pgboss';
  /** Where the workers (and the durable in-process baseline) checkpoint every step. */
  checkpoint: 'redis' | 'postgres';
  stepsPerRun: number;
  byWorkers: Record<string, QueueFigures>;
  inProcess: Omit<QueueFigures, 'resumed'>;
  /**
   * The same in-process runs with the workers' durable checkpoint (Redis, or PostgreSQL with
   * pg-boss; every step): what is left over it is the queue's own cost (enqueue, pick-up, the
   * record, the trace).
   */
  inProcessDurable: Omit<QueueFigures, 'resumed'>;
  /**
   * Queue over in-process: throughput ratio (in-process ÷ queue at 4 workers), added ms per run
   * (p50) over the in-process run (memory checkpoints) and over the same run with Redis checkpoints.
   */
  overhead: { throughputRatio: number; msPerRunP50: number; msPerRunP50OverDurable: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function quantiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 100) / 100;
  return { p50: round(quantileOfSorted(sorted, 0.5)), p99: round(quantileOfSorted(sorted, 0.99)) };
}

interface Target {
  queue: RunQueue;
  registry: RunRegistry;
  events: RunEventLog;
}

/** Throughput: enqueue every run at once, then wait until all ended. */
async function throughput(target: Target, ids: string[], isDone: () => Promise<number>) {
  const started = Date.now();
  const chunk = 50;
  for (let i = 0; i < ids.length; i += chunk)
    await Promise.all(
      ids
        .slice(i, i + chunk)
        .map((runId) => target.queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'bench' }, runId })),
    );
  const deadline = started + 120_000;
  let ended = await isDone();
  while (ended < ids.length && Date.now() < deadline) {
    await sleep(20);
    ended = await isDone();
  }
  return { seconds: (Date.now() - started) / 1000, ended };
}

/**
 * Latency: one run at a time on idle workers, as its user sees it: from just before `enqueue` to a
 * follower of the run's events (subscribed beforehand, as a page would be) receiving its first and
 * its last (`run-end`) event, timed on this process's monotonic clock.
 */
async function latency(target: Target, ids: string[]) {
  const first: number[] = [];
  const whole: number[] = [];
  for (const runId of ids) {
    const following = new AbortController();
    const seen: { first?: number; end?: number } = {};
    let enqueuedAt = 0;
    const follower = (async () => {
      for await (const event of target.events.follow(runId, -1, following.signal)) {
        const at = performance.now();
        seen.first ??= at;
        if (event.type === 'run-end') {
          // A run that broke fast must not make a fast number.
          if (event.outcome.kind !== 'answered')
            throw new Error(`latency run ${runId} ended ${event.outcome.kind}, not answered`);
          seen.end = at;
          return;
        }
      }
    })();
    // The follower's subscription is up before the clock starts.
    await sleep(5);
    enqueuedAt = performance.now();
    const queued = await target.queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'bench' }, runId });
    if (!queued.ok) throw new Error(`latency run ${runId} was refused: ${queued.reason}`);
    const timeout = setTimeout(() => following.abort(), 10_000);
    await follower;
    clearTimeout(timeout);
    following.abort();
    if (seen.first !== undefined) first.push(seen.first - enqueuedAt);
    if (seen.end !== undefined) whole.push(seen.end - enqueuedAt);
  }
  if (whole.length < ids.length)
    throw new Error(`${ids.length - whole.length} latency runs did not end within 10 s`);
  return { firstEventMs: quantiles(first), runMs: quantiles(whole) };
}

/** Untimed runs so every process has run as many as the others before anything is measured. */
async function warmUp(target: Target, count: number, prefix: string) {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-warm-${i}`);
  const pending = new Set(ids);
  await throughput(target, ids, async () => {
    for (const id of [...pending])
      if ((await target.registry.get(id))?.status === 'ended') pending.delete(id);
    return ids.length - pending.size;
  });
  if (pending.size > 0) throw new Error(`${pending.size} warm-up runs did not end`);
}

/** Runs whose record is not `ended` with the answer: lost, or broken (neither may make a fast number). */
async function notAnswered(registry: RunRegistry, ids: readonly string[]): Promise<number> {
  const records = await Promise.all(ids.map((id) => registry.get(id)));
  return records.filter((record) => record?.status !== 'ended' || record.outcome?.kind !== 'answered').length;
}

async function inProcessFigures(
  runs: number,
  latencyRuns: number,
  concurrency: number,
  warmupRuns: number,
  checkpoint: CheckpointStore,
  idPrefix: string,
) {
  const registry = new MemoryRunRegistry();
  const events = new MemoryRunEventLog();
  const effects = new Map<string, number>();
  const queue = new InProcessRunQueue({
    agents: agentRegistry([
      scriptedStepsAgent({
        steps: 6,
        effect: ({ key }) => void effects.set(key, (effects.get(key) ?? 0) + 1),
      }),
    ]),
    checkpoint,
    registry,
    events,
    concurrency,
  });
  const target = { queue, registry, events };
  const ids = Array.from({ length: runs }, (_, i) => `${idPrefix}-${i}`);
  let ended = 0;
  const done = async () => {
    ended = 0;
    for (const id of ids) if ((await registry.get(id))?.status === 'ended') ended++;
    return ended;
  };
  await warmUp(target, warmupRuns, idPrefix);
  await queue.idle();
  const measured = await throughput(target, ids, async () => {
    await queue.idle();
    return done();
  });
  const lat = await latency(
    target,
    Array.from({ length: latencyRuns }, (_, i) => `${idPrefix}-latency-${i}`),
  );
  const lost = await notAnswered(registry, ids);
  await queue.close();
  return {
    runs,
    lost,
    duplicates: [...effects.values()].filter((count) => count > 1).length,
    throughputPerSecond: Math.round((runs / measured.seconds) * 10) / 10,
    ...lat,
  };
}

/** Runs the queue benchmark and returns its report. */
export async function runQueueBench(
  options: BenchQueueOptions,
  progress: (line: string) => void = () => {},
): Promise<QueueBenchReport> {
  const engine = options.engine ?? 'bullmq';
  const [ioredis, redisStores] = await importPeers('reins bench queue', [
    { name: 'ioredis', range: '^5', load: () => import('ioredis') },
    { name: 'ioredis', range: '^5', load: () => import('../redis/index.js') },
  ]);
  const runs = options.runs ?? 400;
  const latencyRuns = options.latencyRuns ?? 100;
  const concurrency = options.concurrency ?? 16;
  const warmupRuns = options.warmupRuns ?? 400;
  const postgresUrl = options.postgresUrl ?? 'postgres://postgres@127.0.0.1:5432/test';
  const bin = fileURLToPath(new URL('./bin.js', import.meta.url));
  const agentsModule = fileURLToPath(new URL('./bench-queue-agents.js', import.meta.url));
  const redis = new ioredis.Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const byWorkers: Record<string, QueueFigures> = {};
  const fleet = engine === 'pgboss' ? await pgBossFleet(postgresUrl) : await bullmqFleet(redis);
  try {
    progress('in-process baseline');
    const inProcess = await inProcessFigures(
      runs,
      latencyRuns,
      concurrency,
      warmupRuns,
      new MemoryCheckpointStore(),
      `reins-bench-queue-${process.pid}-inproc-memory`,
    );
    progress(`in-process baseline, ${fleet.checkpoint === 'redis' ? 'Redis' : 'PostgreSQL'} checkpoints`);
    const durablePrefix = `reins-bench-queue-${process.pid}-inproc`;
    const inProcessDurable = await inProcessFigures(
      runs,
      latencyRuns,
      concurrency,
      warmupRuns,
      fleet.checkpoint === 'redis'
        ? new redisStores.RedisCheckpointStore({ redis, keyPrefix: `${durablePrefix}:checkpoint` })
        : await fleet.durableCheckpoint(),
      durablePrefix,
    );
    await deleteKeys(redis, durablePrefix);
    await fleet.forget(durablePrefix);
    for (const count of options.workers ?? [1, 4, 8]) {
      const prefix = `reins-bench-queue-${process.pid}-${count}`;
      progress(`${count} ${engine} worker process${count === 1 ? '' : 'es'}`);
      const children: ChildProcess[] = [];
      // Whatever goes wrong below, no worker process is left behind.
      const orphans = () => {
        for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      };
      process.once('exit', orphans);
      const env = { ...process.env, REINS_BENCH_PREFIX: prefix };
      await Promise.all(
        Array.from(
          { length: count },
          () =>
            new Promise<void>((ready, failed) => {
              const child = spawn(
                process.execPath,
                [
                  bin,
                  'worker',
                  '--agents',
                  agentsModule,
                  '--redis',
                  options.redisUrl,
                  ...fleet.workerArgs(prefix),
                  '--concurrency',
                  String(concurrency),
                  '--quiet',
                ],
                { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
              );
              children.push(child);
              // A worker that never says it is ready must not hang the benchmark.
              const waiting = setTimeout(
                () => failed(new Error(`bench worker ${child.pid} was not ready within 60 s`)),
                60_000,
              );
              child.once('message', () => {
                clearTimeout(waiting);
                ready();
              });
              child.once('exit', (code) => {
                clearTimeout(waiting);
                failed(new Error(`bench worker exited ${code}`));
              });
            }),
        ),
      );
      const { target, ended, close } = await fleet.queue(prefix);
      // Run ids name the configuration: PostgreSQL's tables outlive this process.
      const ids = Array.from({ length: runs }, (_, i) => `${prefix}-q-${i}`);
      // Asks only about runs not seen ended yet, so the polling does not load the workers' store.
      const pending = new Set(ids);
      const done = async () => {
        const asked = [...pending];
        for (const id of await ended(asked)) pending.delete(id);
        return ids.length - pending.size;
      };
      await warmUp(target, warmupRuns * count, prefix);
      const measured = await throughput(target, ids, done);
      const lat = await latency(
        target,
        Array.from({ length: latencyRuns }, (_, i) => `${prefix}-latency-${i}`),
      );
      const records = await Promise.all(ids.map((id) => target.registry.get(id)));
      const effects = await redis.hvals(`${prefix}:effects`);
      byWorkers[String(count)] = {
        runs,
        lost: await notAnswered(target.registry, ids),
        duplicates: effects.filter((value) => Number(value) > 1).length,
        resumed: records.filter((record) => (record?.attempts ?? 0) > 1).length,
        throughputPerSecond: Math.round((runs / measured.seconds) * 10) / 10,
        ...lat,
      };
      for (const child of children) child.removeAllListeners('exit');
      const exits = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(exits);
      process.off('exit', orphans);
      await close();
      await deleteKeys(redis, prefix);
    }
    const four = byWorkers['4'] ?? Object.values(byWorkers)[0];
    if (!four) throw new Error('no worker count was measured');
    return {
      workers: byWorkers['4'] ? 4 : Number(Object.keys(byWorkers)[0]),
      engine,
      checkpoint: fleet.checkpoint,
      stepsPerRun: 6,
      ...four,
      byWorkers,
      inProcess,
      inProcessDurable,
      overhead: {
        throughputRatio: Math.round((inProcess.throughputPerSecond / four.throughputPerSecond) * 100) / 100,
        msPerRunP50: Math.round((four.runMs.p50 - inProcess.runMs.p50) * 100) / 100,
        msPerRunP50OverDurable: Math.round((four.runMs.p50 - inProcessDurable.runMs.p50) * 100) / 100,
      },
    };
  } finally {
    await fleet.close();
    await redis.quit().catch(() => {});
  }
}

/** What differs between the engines: the workers' flags, the queue, where checkpoints go. */
interface BenchFleet {
  checkpoint: 'redis' | 'postgres';
  workerArgs(prefix: string): string[];
  durableCheckpoint(): Promise<CheckpointStore>;
  /** Deletes what runs whose ids start with `prefix` left in the engine's tables. */
  forget(prefix: string): Promise<void>;
  queue(prefix: string): Promise<{
    target: Target;
    /** Which of `ids` have ended. */
    ended(ids: string[]): Promise<string[]>;
    close(): Promise<void>;
  }>;
  close(): Promise<void>;
}

async function bullmqFleet(redis: import('ioredis').Redis): Promise<BenchFleet> {
  const [bullmq] = await importPeers('reins bench queue', [
    { name: 'bullmq', range: '^6', load: () => import('../bullmq/index.js') },
  ]);
  return {
    checkpoint: 'redis',
    workerArgs: (prefix) => ['--checkpoint', 'redis', '--prefix', prefix, '--queue', 'bench'],
    durableCheckpoint: () => Promise.reject(new Error('BullMQ checkpoints in Redis')),
    // Its keys carry the prefix: deleteKeys takes them.
    forget: async () => {},
    async queue(prefix) {
      const queue = new bullmq.BullmqRunQueue({ redis, prefix, queueName: 'bench' });
      return {
        target: { queue, registry: queue.registry, events: queue.events },
        async ended(ids) {
          const pipeline = redis.pipeline();
          for (const id of ids) pipeline.hget(`${prefix}:run:${id}`, 'status');
          const replies = (await pipeline.exec()) ?? [];
          return ids.filter((_, index) => replies[index]?.[1] === 'ended');
        },
        close: () => queue.close(),
      };
    },
    close: async () => {},
  };
}

async function pgBossFleet(postgresUrl: string): Promise<BenchFleet> {
  const [pgboss, pg, postgresStores] = await importPeers('reins bench queue --engine pgboss', [
    { name: 'pg-boss', range: '^10', load: () => import('../pgboss/index.js') },
    { name: 'pg', range: '^8', load: () => import('pg') },
    { name: 'pg', range: '^8', load: () => import('../postgres/postgres-checkpoint-store.js') },
  ]);
  const pool = new pg.default.Pool({ connectionString: postgresUrl, max: 8 });
  pool.on('error', () => {});
  const tables = new pgboss.PostgresRunRegistry({ pool }).tables;
  // The configuration's rows: its run ids carry the prefix.
  const forget = async (prefix: string) => {
    const like = `${prefix}-%`;
    for (const table of [
      tables.events,
      tables.ended,
      tables.runs,
      'reins_checkpoints',
      'reins_checkpoints_log',
    ])
      await pool.query(`DELETE FROM ${table} WHERE run_id LIKE $1`, [like]).catch(() => {});
  };
  return {
    checkpoint: 'postgres',
    // Records, traces and checkpoints in PostgreSQL's default tables; a queue of its own per configuration.
    workerArgs: (prefix) => [
      '--engine',
      'pgboss',
      '--postgres',
      postgresUrl,
      '--checkpoint',
      'postgres',
      '--queue',
      prefix,
      // 8 processes of concurrency + 4 connections each would pass PostgreSQL's 100 (max_connections).
      '--pool-size',
      '8',
    ],
    durableCheckpoint: async () => new postgresStores.PostgresCheckpointStore({ pool }),
    async queue(prefix) {
      const queue = new pgboss.PgBossRunQueue({ pool, queueName: prefix });
      return {
        target: { queue, registry: queue.registry, events: queue.events },
        async ended(ids) {
          const { rows } = await pool.query<{ run_id: string }>(
            `SELECT run_id FROM ${queue.registry.tables.runs} WHERE run_id = ANY($1) AND status = 'ended'`,
            [ids],
          );
          return rows.map((row) => row.run_id);
        },
        async close() {
          await pgboss.deleteBossQueue(queue.boss, prefix).catch(() => {});
          await queue.close();
          await forget(prefix);
        },
      };
    },
    forget,
    close: () => pool.end(),
  };
}

async function deleteKeys(redis: import('ioredis').Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

/** `reins bench queue [--json]`. */
export async function benchQueue(json: boolean, options: BenchQueueOptions): Promise<number> {
  const report = await runQueueBench(options, (line) => {
    if (!json) process.stderr.write(`${line}…\n`);
  });
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return 0;
  }
  console.log(
    report.engine === 'pgboss'
      ? `\nQueued runs: ${report.stepsPerRun}-step scripted runs (0-latency model), PostgreSQL checkpoints every step, pg-boss on ${options.postgresUrl ?? 'postgres://postgres@127.0.0.1:5432/test'}`
      : `\nQueued runs: ${report.stepsPerRun}-step scripted runs (0-latency model), Redis checkpoints every step, BullMQ on ${options.redisUrl}`,
  );
  console.log(
    `  ${'setup'.padEnd(22)} ${'runs/s'.padStart(8)} ${'first event p50'.padStart(16)} ${'p99'.padStart(8)} ${'run p50'.padStart(9)} ${'p99'.padStart(8)} ${'lost'.padStart(5)} ${'dup'.padStart(4)}`,
  );
  const row = (name: string, figures: Omit<QueueFigures, 'resumed'>) =>
    console.log(
      `  ${name.padEnd(22)} ${figures.throughputPerSecond.toFixed(1).padStart(8)} ${`${figures.firstEventMs.p50} ms`.padStart(16)} ${`${figures.firstEventMs.p99} ms`.padStart(8)} ${`${figures.runMs.p50} ms`.padStart(9)} ${`${figures.runMs.p99} ms`.padStart(8)} ${String(figures.lost).padStart(5)} ${String(figures.duplicates).padStart(4)}`,
    );
  row('in-process (1 process)', report.inProcess);
  row(`same, ${report.checkpoint === 'redis' ? 'Redis' : 'PostgreSQL'} checkpoints`, report.inProcessDurable);
  for (const [count, figures] of Object.entries(report.byWorkers))
    row(`${count} worker process${count === '1' ? '' : 'es'}`, figures);
  const added = Object.entries(report.byWorkers)
    .map(
      ([count, figures]) =>
        `${count}: ${Math.round((figures.runMs.p50 - report.inProcess.runMs.p50) * 100) / 100} ms`,
    )
    .join(', ');
  console.log(
    `\n  queue overhead at ${report.workers} workers: ${report.overhead.msPerRunP50} ms per run (p50, enqueue to a follower seeing run-end; bar ≤ 5 ms; by worker processes ${added}), in-process ÷ queue throughput ${report.overhead.throughputRatio}× (bar: ≥ 200 runs/s with 4 workers)`,
  );
  console.log(
    `  over the in-process run with the same ${report.checkpoint === 'redis' ? 'Redis' : 'PostgreSQL'} checkpoints (the queue's own cost): ${report.overhead.msPerRunP50OverDurable} ms per run (p50)`,
  );
  return 0;
}
