import { setMaxListeners } from 'node:events';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type ExecuteRunResult, executeRun, type RunExecutorOptions } from '../queue/execute-run.js';
import type { RunJob } from '../queue/run-stores.js';
import { type RandomSource, systemClock } from '../time/clock.js';
import { cancelChannel } from './bullmq-run-queue.js';
import { type RedisConnection, redisConnection } from './redis-connection.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';
import { TenantLimiter, type TenantLimits } from './tenant-limiter.js';

/** Options for {@link createRunWorker}. */
export interface RunWorkerOptions extends Omit<RunExecutorOptions, 'registry' | 'events'> {
  /** A Redis URL or an ioredis client (made with `maxRetriesPerRequest: null`). @default 'redis://127.0.0.1:6379' */
  redis?: RedisConnection;
  /** @default 'reins-runs' */
  queueName?: string;
  /** @default 'reins' */
  prefix?: string;
  /** Runs this worker executes at once. @default 8 */
  concurrency?: number;
  /** Per-tenant concurrency over every worker, and a per-tenant start rate. @default none */
  tenants?: TenantLimits;
  /** How long before a refused tenant's job is tried again (plus up to as much jitter). @default 200 */
  tenantRetryMs?: number;
  /**
   * BullMQ's job lock: a worker that stops renewing it (killed, or its event loop blocked) loses
   * the job to the stalled-job check after about this long. @default 30_000
   */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for. @default 30_000 */
  stalledIntervalMs?: number;
  /** Times a job may stall (its worker died) before BullMQ fails it. @default 10 */
  maxStalledCount?: number;
  /**
   * Records and traces of ended runs expire this long after the run ends (give the queue the same).
   * @default undefined (kept until deleted)
   */
  endedRunTtlMs?: number;
  /** On `close()`, how long in-flight runs get to reach the end of their step before they stop at once. @default 10_000 */
  drainTimeoutMs?: number;
  /** For the jitter on tenant retries. @default Math.random */
  random?: RandomSource;
  /** Told about every execution (tests, metrics). */
  onExecuted?: (job: RunJob, result: ExecuteRunResult) => void;
}

/** A running worker. */
export interface RunWorker {
  readonly worker: Worker<RunJob>;
  readonly registry: RedisRunRegistry;
  readonly events: RedisRunEventLog;
  /** Runs executing here now. */
  readonly running: number;
  /**
   * Graceful shutdown: takes no new jobs, lets each run finish the step in flight (up to
   * `drainTimeoutMs`), checkpoints it and hands its job back to the queue, where another worker
   * resumes it.
   */
  close(): Promise<void>;
}

/**
 * A BullMQ worker that executes queued runs with {@link executeRun}: the agent from its definition,
 * resumed from the shared checkpoint store when the run has one (after a crash another worker's
 * stalled-job check hands the job here), the trace to the Redis event log, the record in Redis.
 * Cancels published by {@link BullmqRunQueue.cancel} reach the run's `AbortSignal`.
 *
 * @example
 * import { createRunWorker } from 'reins/bullmq';
 * import { agentRegistry, scriptedStepsAgent } from 'reins/queue';
 * import { SqliteCheckpointStore } from 'reins/sqlite';
 * const worker = await createRunWorker({
 *   agents: agentRegistry([scriptedStepsAgent({ effect: () => {} })]),
 *   checkpoint: new SqliteCheckpointStore({ database: 'runs.db' }),
 * });
 * process.on('SIGTERM', () => void worker.close());
 */
export async function createRunWorker(options: RunWorkerOptions): Promise<RunWorker> {
  const { redis, owned } = redisConnection(options.redis);
  const prefix = options.prefix ?? 'reins';
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const lockDurationMs = options.lockDurationMs ?? 30_000;
  const ttl = options.endedRunTtlMs === undefined ? {} : { endedRunTtlMs: options.endedRunTtlMs };
  const registry = new RedisRunRegistry({ redis, prefix, ...ttl });
  const events = new RedisRunEventLog({ redis, prefix, records: registry, ...ttl });
  const limiter = new TenantLimiter({
    redis,
    prefix,
    limits: options.tenants ?? {},
    leaseMs: lockDurationMs,
  });
  const executor: RunExecutorOptions = { ...options, registry, events, clock };
  const cancels = new Map<string, AbortController>();
  const drain = new AbortController();
  const drainNow = new AbortController();
  // Every run in flight listens to both: as many listeners as the concurrency, not a leak.
  setMaxListeners(0, drain.signal, drainNow.signal);

  const subscriber: Redis = redis.duplicate();
  subscriber.on('message', (_channel: string, runId: string) => cancels.get(runId)?.abort());
  // A cancel published while the subscriber was away reached no one: each time it is ready again
  // (ioredis has resubscribed; subscribing here too makes sure before anything is read), the runs
  // in flight whose record says `cancelling` are cancelled, as the lost notice would have done.
  let subscribedOnce = false;
  subscriber.on('ready', () => {
    if (!subscribedOnce || cancels.size === 0) return;
    void (async () => {
      await subscriber.subscribe(cancelChannel(prefix));
      const runIds = [...cancels.keys()];
      const records = await Promise.all(runIds.map((runId) => registry.get(runId)));
      records.forEach((record, index) => {
        if (record?.status === 'cancelling') cancels.get(runIds[index] as string)?.abort();
      });
    })().catch(() => {
      // The connection went again: its next `ready` does this again.
    });
  });
  await subscriber.subscribe(cancelChannel(prefix));
  subscribedOnce = true;

  const delay = async (job: Job<RunJob>, token: string | undefined, ms: number): Promise<never> => {
    await job.moveToDelayed(Date.now() + ms, token);
    throw new DelayedError();
  };

  const processJob = async (job: Job<RunJob>, token?: string): Promise<string> => {
    const data = job.data;
    const tenant = data.request.tenant ?? data.request.actor.id;
    if (limiter.active) {
      const admitted = await limiter.admit(tenant, data.runId, clock.now());
      if (!admitted.ok) {
        const base = admitted.reason === 'rate' ? admitted.retryInMs : (options.tenantRetryMs ?? 200);
        return delay(job, token, base + Math.floor(random() * (options.tenantRetryMs ?? 200)));
      }
    }
    const cancel = new AbortController();
    cancels.set(data.runId, cancel);
    const renewal = limiter.active
      ? setInterval(
          () => void limiter.renew(tenant, data.runId, clock.now()).catch(() => {}),
          lockDurationMs / 3,
        )
      : undefined;
    let result: ExecuteRunResult;
    try {
      result = await executeRun(data, executor, {
        cancel: cancel.signal,
        drain: drain.signal,
        drainNow: drainNow.signal,
      });
    } finally {
      cancels.delete(data.runId);
      if (renewal) clearInterval(renewal);
      if (limiter.active) await limiter.release(tenant, data.runId).catch(() => {});
    }
    options.onExecuted?.(data, result);
    // Drained: back to the queue at once, for any worker (this one takes no more jobs).
    if (result.kind === 'interrupted') return delay(job, token, 0);
    return result.kind;
  };

  const worker = new Worker<RunJob>(options.queueName ?? 'reins-runs', processJob, {
    connection: redis,
    prefix,
    concurrency: options.concurrency ?? 8,
    lockDuration: lockDurationMs,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount: options.maxStalledCount ?? 10,
  });
  worker.on('error', () => {
    // Connection trouble is retried by BullMQ; an unhandled 'error' event would end the process.
  });

  let closing: Promise<void> | undefined;
  return {
    worker,
    registry,
    events,
    get running() {
      return cancels.size;
    },
    close() {
      closing ??= (async () => {
        drain.abort();
        const timer = setTimeout(() => drainNow.abort(), options.drainTimeoutMs ?? 10_000);
        try {
          await worker.close();
        } finally {
          clearTimeout(timer);
        }
        await subscriber.quit().catch(() => {});
        await events.close();
        if (owned) await redis.quit().catch(() => {});
      })();
      return closing;
    },
  };
}
