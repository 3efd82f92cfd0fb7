import { setMaxListeners } from 'node:events';
import { type ExecuteRunResult, executeRun, type RunExecutorOptions } from '../queue/execute-run.js';
import type { RunJob } from '../queue/run-stores.js';
import { systemClock } from '../time/clock.js';
import { PostgresListener } from './listener.js';
import {
  bossDb,
  defaultQueueName,
  PgBoss,
  type PgBossConnectionOptions,
  poolFor,
  startBoss,
} from './pgboss-connection.js';
import { PostgresRunEventLog } from './postgres-run-event-log.js';
import { PostgresRunRegistry } from './postgres-run-registry.js';
import { connectionLost, jsonbData } from './tables.js';

/** Options for {@link createPgBossWorker}. */
export interface PgBossWorkerOptions
  extends Omit<RunExecutorOptions, 'registry' | 'events'>,
    PgBossConnectionOptions {
  /** Runs this worker executes at once (one pg-boss work loop each). @default 8 */
  concurrency?: number;
  /**
   * How often an idle work loop asks for a job when no notification woke it (a notification is
   * sent with every job, so this matters only when one is lost). pg-boss 10's floor is 0.5.
   * @default 2
   */
  pollingIntervalSeconds?: number;
  /**
   * How often this worker runs pg-boss's maintenance, which hands the expired jobs of workers that
   * died to the others. @default 30
   */
  maintenanceIntervalSeconds?: number;
  /** On `close()`, how long in-flight runs get to reach the end of their step before they stop at once. @default 10_000 */
  drainTimeoutMs?: number;
  /** Told about every execution (tests, metrics). */
  onExecuted?: (job: RunJob, result: ExecuteRunResult) => void;
}

/** A running pg-boss worker. */
export interface PgBossWorker {
  readonly boss: PgBoss;
  readonly registry: PostgresRunRegistry;
  readonly events: PostgresRunEventLog;
  /** Runs executing here now. */
  readonly running: number;
  /**
   * Graceful shutdown: takes no new jobs, lets each run finish the step in flight (up to
   * `drainTimeoutMs`), checkpoints it and queues it again, for another worker to resume.
   */
  close(): Promise<void>;
}

/**
 * A pg-boss worker that executes queued runs with {@link executeRun}, as `createRunWorker` does on
 * BullMQ: the agent from its definition, resumed from the shared checkpoint store when the run has
 * one (after a crash, when the dead worker's job expired and pg-boss handed it out again), the
 * trace and the record in PostgreSQL. Cancels sent by {@link PgBossRunQueue.cancel} reach the run's
 * `AbortSignal`; a cancel sent while this worker's listening connection was down is found in the
 * records when it is back.
 *
 * @example
 * ```ts
 * import { MemoryCheckpointStore } from 'reins';
 * import { createPgBossWorker } from 'reins/pgboss';
 * import { agentRegistry, scriptedStepsAgent } from 'reins/queue';
 * const worker = await createPgBossWorker({
 *   connectionString: 'postgres://postgres@127.0.0.1:5432/test',
 *   agents: agentRegistry([scriptedStepsAgent({ effect: () => {} })]),
 *   checkpoint: new MemoryCheckpointStore(), // shared by every worker in production: PostgresCheckpointStore
 * });
 * await worker.close();
 * ```
 */
export async function createPgBossWorker(options: PgBossWorkerOptions): Promise<PgBossWorker> {
  // The work loops' fetches, the listening connection and the runs' writes share it.
  const { pool, owned } = poolFor(options, (options.concurrency ?? 8) + 4);
  const queueName = options.queueName ?? defaultQueueName;
  const tables = {
    ...(options.table === undefined ? {} : { table: options.table }),
    ...(options.schema === undefined ? {} : { schema: options.schema }),
  };
  const registry = new PostgresRunRegistry({ pool, ...tables });
  const events = new PostgresRunEventLog({ pool, ...tables });
  const executor: RunExecutorOptions = {
    ...options,
    registry,
    events,
    clock: options.clock ?? systemClock,
    // A write lost to a restart or a failover: the job is retried and the run resumes.
    retryable: (error) => connectionLost(error),
  };
  const bossConnection = bossDb(pool);
  const boss = new PgBoss({
    db: bossConnection.db,
    schema: options.bossSchema ?? 'pgboss',
    supervise: true,
    schedule: false,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
  });
  boss.on('error', () => {
    // pg-boss retries its polling and maintenance; an unhandled 'error' would end the process.
  });
  await Promise.all([startBoss(boss, queueName), registry.ensureSchema()]);

  // A run can have two executions here (its job expired and was handed out again while the first
  // still ran): a cancel reaches both, and the first to stop removes only its own.
  const cancels = new Map<string, Set<AbortController>>();
  const cancel = (runId: string) => {
    for (const controller of cancels.get(runId) ?? []) controller.abort();
  };
  const drain = new AbortController();
  const drainNow = new AbortController();
  setMaxListeners(0, drain.signal, drainNow.signal);

  const listener = new PostgresListener(pool);
  await listener.listen(registry.tables.cancelChannel, cancel);
  // A cancel sent while the connection was down reached no one: the records say.
  listener.onReconnect(() => {
    const runIds = [...cancels.keys()];
    void Promise.all(runIds.map((runId) => registry.get(runId)))
      .then((records) =>
        records.forEach((record, index) => {
          if (record?.status === 'cancelling') cancel(runIds[index] as string);
        }),
      )
      .catch(() => {});
  });

  const ids: string[] = [];
  const handle = async (jobs: PgBoss.JobWithMetadata<RunJob>[]): Promise<void> => {
    for (const job of jobs) {
      const data = job.data;
      const controller = new AbortController();
      let running = cancels.get(data.runId);
      if (!running) {
        running = new Set();
        cancels.set(data.runId, running);
      }
      running.add(controller);
      let result: ExecuteRunResult;
      try {
        result = await executeRun(data, executor, {
          cancel: controller.signal,
          drain: drain.signal,
          drainNow: drainNow.signal,
        });
      } finally {
        running.delete(controller);
        if (running.size === 0 && cancels.get(data.runId) === running) cancels.delete(data.runId);
      }
      options.onExecuted?.(data, result);
      // Drained: queued again at once, as it was queued (priority, retries, expiry), for any
      // worker (this one takes no more jobs), which a notification wakes.
      if (result.kind === 'interrupted') {
        await boss.send(queueName, jsonbData(data), {
          expireInSeconds: job.expireInSeconds,
          retryLimit: job.retryLimit,
          retryDelay: job.retryDelay,
          retryBackoff: job.retryBackoff,
          ...(job.priority ? { priority: job.priority } : {}),
        });
        await pool.query('SELECT pg_notify($1, $2)', [registry.tables.jobsChannel, queueName]);
      }
    }
    // pg-boss 10 waits out its polling interval after each job: a backlog would drain one run per
    // loop per interval. Its loops ask again at once instead (once this job is marked complete).
    if (!drain.signal.aborted)
      setTimeout(() => {
        for (const id of ids) boss.notifyWorker(id);
      }, 0);
  };
  const workOptions = {
    batchSize: 1,
    includeMetadata: true as const,
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
  };
  for (let i = 0; i < (options.concurrency ?? 8); i++)
    ids.push(await boss.work<RunJob>(queueName, workOptions, handle));
  // Every job is sent with a notification: the idle loops fetch at once instead of at their next poll.
  await listener.listen(registry.tables.jobsChannel, (name) => {
    if (name === queueName) for (const id of ids) boss.notifyWorker(id);
  });

  let closing: Promise<void> | undefined;
  return {
    boss,
    registry,
    events,
    get running() {
      return cancels.size;
    },
    close() {
      closing ??= (async () => {
        drain.abort();
        const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
        const timer = setTimeout(() => drainNow.abort(), drainTimeoutMs);
        try {
          await boss.stop({ graceful: true, wait: true, timeout: drainTimeoutMs + 5_000 });
        } finally {
          clearTimeout(timer);
        }
        await bossConnection.close();
        await listener.close();
        await events.close();
        if (owned) await pool.end();
      })();
      return closing;
    },
  };
}
