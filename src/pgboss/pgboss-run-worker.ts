import { setMaxListeners } from 'node:events';
import { type ExecuteRunResult, executeRun, type RunExecutorOptions } from '../queue/execute-run.js';
import type { RunJob } from '../queue/run-stores.js';
import type { Admission, TenantLimits } from '../queue/tenant-limits.js';
import { systemClock } from '../time/clock.js';
import { PostgresListener } from './listener.js';
import {
  bossDb,
  defaultQueueName,
  onClient,
  PgBoss,
  type PgBossConnectionOptions,
  poolFor,
  startBoss,
} from './pgboss-connection.js';
import { PostgresRunEventLog } from './postgres-run-event-log.js';
import { PostgresRunRegistry } from './postgres-run-registry.js';
import { PostgresTenantLimiter } from './postgres-tenant-limiter.js';
import { connectionLost, inTransaction, jsonbData, retryingSetup } from './tables.js';

/** Options for {@link createPgBossWorker}. */
export interface PgBossWorkerOptions
  extends Omit<RunExecutorOptions, 'registry' | 'events'>,
    PgBossConnectionOptions {
  /** Runs this worker executes at once (one pg-boss work loop each). @default 8 */
  concurrency?: number;
  /**
   * How often an idle work loop asks for a job when no notification woke it (a notification is
   * sent with every job, so this matters only when one is lost). At least 0.1.
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
  /**
   * Per-tenant concurrency over every worker, and a per-tenant start rate (`request.tenant ??
   * actor.id`), kept in PostgreSQL. A refused job is queued again for later. @default none
   */
  tenants?: TenantLimits;
  /** How long before a refused tenant's job is tried again (plus up to as much jitter). @default 200 */
  tenantRetryMs?: number;
  /** A tenant slot whose worker stopped renewing it (it died) frees itself after this. @default 60_000 */
  tenantLeaseMs?: number;
  /** For the jitter on tenant retries. @default Math.random */
  random?: () => number;
  /**
   * Runs that ended this long ago are expired (`PostgresRunRegistry.sweep`): their records and
   * traces go, their ids stay refused. Each worker sweeps every `maintenanceIntervalSeconds`; give
   * the checkpoint store its own retention. @default kept until you delete them
   */
  endedRunTtlMs?: number;
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
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const tenantLeaseMs = options.tenantLeaseMs ?? 60_000;
  const limiter = new PostgresTenantLimiter({
    pool,
    tables: registry.tables,
    limits: options.tenants ?? {},
    leaseMs: tenantLeaseMs,
  });
  const executor: RunExecutorOptions = {
    ...options,
    registry,
    events,
    clock,
    // A write lost to a restart or a failover: the job is retried and the run resumes.
    retryable: (error) => connectionLost(error),
  };
  const bossConnection = bossDb(pool);
  const makeBoss = () => {
    const made = new PgBoss({
      db: bossConnection.db,
      schema: options.bossSchema ?? 'pgboss',
      supervise: true,
      schedule: false,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
    });
    made.on('error', () => {
      // pg-boss retries its polling and maintenance; an unhandled 'error' would end the process.
    });
    return made;
  };
  let boss: PgBoss;
  try {
    await registry.ensureSchema();
    // Workers starting together on a new queue can deadlock in pg-boss's start (its first
    // maintenance against another's queue creation): PostgreSQL rolls one back, and it starts again
    // on a new PgBoss (one whose start failed is left half started).
    boss = await retryingSetup(async () => {
      const candidate = makeBoss();
      try {
        await startBoss(candidate, queueName);
        return candidate;
      } catch (error) {
        await candidate.stop({ graceful: false, wait: true }).catch(() => {});
        throw error;
      }
    });
  } catch (error) {
    // Nothing of this worker may outlive its failed start (an owned pool keeps a process alive).
    await bossConnection.close();
    if (owned) await pool.end().catch(() => {});
    throw error;
  }

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

  // pg-boss's job table, for the heartbeat and the fenced completion below: both touch the job only
  // while it is this execution's (same id, same retry_count, still active). $1 queue, $2 id, $3 retry.
  const jobTable = `"${options.bossSchema ?? 'pgboss'}".job`;
  const heldByThisExecution = `name = $1 AND id = $2 AND retry_count = $3 AND state = 'active'`;
  const pollMs = Math.max(100, (options.pollingIntervalSeconds ?? 2) * 1_000);

  /**
   * One execution of a job. pg-boss 10 has no heartbeat, and its `work()` gives up on a handler
   * after the job's `expireInSeconds` and retries the job while the handler goes on: a run longer
   * than that was started again, and a worker that died was noticed only that long after. So the
   * work loops here are reins's own: a job is fetched, its execution keeps it by moving its
   * `started_on` forward every quarter of its `expireInSeconds` (pg-boss's maintenance fails an
   * active job once `started_on + expire_in` has passed: its lease), and it is completed or failed
   * only while it is still this execution's: the same id at the same `retry_count` (a job that
   * expired and was taken again counts one more retry), in a transaction holding its row.
   */
  const execute = async (job: PgBoss.JobWithMetadata<RunJob>): Promise<void> => {
    const data = job.data;
    const tenant = data.request.tenant ?? data.request.actor.id;
    // This execution: a job taken again after its lease lapsed counts one more retry.
    const owner = `${job.id}:${job.retryCount}`;
    if (limiter.active) {
      let admitted: Admission | undefined;
      try {
        admitted = await limiter.admit(tenant, data.runId, clock.now(), owner);
      } catch (error) {
        // The database is away: try later. Anything else would fail the same way every time: the
        // job fails (retried with backoff, then left failed) rather than go round forever.
        if (!connectionLost(error)) {
          await settle(job, undefined, error).catch(() => {});
          return;
        }
      }
      if (!admitted?.ok) {
        // Refused: the job goes back for later, to any worker, waiting longer each time it is
        // refused again (up to 5 s), so a tenant's backlog does not churn jobs several times a second.
        const retryMs = options.tenantRetryMs ?? 200;
        const refusals = (data as RunJob & { tenantRefusals?: number }).tenantRefusals ?? 0;
        const base =
          admitted?.reason === 'rate'
            ? admitted.retryInMs
            : Math.min(retryMs * 2 ** Math.min(refusals, 10), Math.max(retryMs, 5_000));
        const laterMs = base + Math.floor(random() * retryMs);
        await settle(job, { later: laterMs, refusals: refusals + 1 }, undefined).catch(() => {});
        // pg-boss hands it out once its start time has passed: look for it then.
        setTimeout(() => wake(), laterMs).unref?.();
        return;
      }
    }
    const controller = new AbortController();
    let running = cancels.get(data.runId);
    if (!running) {
      running = new Set();
      cancels.set(data.runId, running);
    }
    running.add(controller);
    const beatMs = Math.max(50, (job.expireInSeconds * 1_000) / 4);
    let beating: Promise<unknown> = Promise.resolve();
    const renewal = limiter.active
      ? setInterval(
          () => void limiter.renew(tenant, data.runId, clock.now(), owner).catch(() => {}),
          tenantLeaseMs / 3,
        )
      : undefined;
    const heartbeat = setInterval(() => {
      beating = pool
        .query(`UPDATE ${jobTable} SET started_on = now() WHERE ${heldByThisExecution}`, [
          queueName,
          job.id,
          job.retryCount,
        ])
        // A beat lost to a restart: the next one, a quarter of the lease later, tries again.
        .catch(() => {});
    }, beatMs);
    let result: ExecuteRunResult | undefined;
    let failure: unknown;
    try {
      result = await executeRun(data, executor, {
        cancel: controller.signal,
        drain: drain.signal,
        drainNow: drainNow.signal,
      });
    } catch (error) {
      failure = error;
    } finally {
      clearInterval(heartbeat);
      if (renewal) clearInterval(renewal);
      if (limiter.active) await limiter.release(tenant, data.runId, owner).catch(() => {});
      await beating;
      running.delete(controller);
      if (running.size === 0 && cancels.get(data.runId) === running) cancels.delete(data.runId);
    }
    if (result) options.onExecuted?.(data, result);
    await settle(job, result, failure).catch(() => {
      // The database went away: the job stays active until its lease lapses, then is handed out
      // again and the worker that takes it finds the run where this execution left it.
    });
  };

  /** Completes (or, when the execution threw, fails) the job if it is still this execution's. */
  const settle = async (
    job: PgBoss.JobWithMetadata<RunJob>,
    result: ExecuteRunResult | { later: number; refusals: number } | undefined,
    failure: unknown,
  ): Promise<void> => {
    await inTransaction(pool, async (client) => {
      const held = await client.query(`SELECT 1 FROM ${jobTable} WHERE ${heldByThisExecution} FOR UPDATE`, [
        queueName,
        job.id,
        job.retryCount,
      ]);
      // Not this execution's any more (its lease lapsed and the job was handed out again): the
      // execution that holds it now settles it.
      if (held.rowCount !== 1) return;
      const db = { db: onClient(client) };
      if (!result) {
        await boss.fail(queueName, job.id, errorOutput(failure), db);
        return;
      }
      // Drained, or refused by the tenant limits: queued again, as it was queued (priority,
      // retries, lease), for any worker (a drained one takes no more jobs), in the transaction
      // that completes this job; a notification wakes idle workers.
      const later = 'later' in result ? result.later : undefined;
      const kind = 'later' in result ? 'later' : result.kind;
      if (kind === 'later' || kind === 'interrupted') {
        const refusals = 'later' in result ? { tenantRefusals: result.refusals } : {};
        await boss.send(queueName, jsonbData({ ...job.data, ...refusals }), {
          expireInSeconds: job.expireInSeconds,
          retryLimit: job.retryLimit,
          retryDelay: job.retryDelay,
          retryBackoff: job.retryBackoff,
          ...(job.priority ? { priority: job.priority } : {}),
          ...(later ? { startAfter: new Date(Date.now() + later) } : {}),
          ...db,
        });
        // A job that may start now wakes an idle loop; one for later would wake it for nothing.
        if (later === undefined)
          await client.query('SELECT pg_notify($1, $2)', [registry.tables.jobsChannel, queueName]);
      }
      await boss.complete(queueName, job.id, { kind }, db);
    });
  };

  // Idle loops wait for a notification (one is sent with every job) or their poll, whichever first.
  let notices = 0;
  const idle = new Set<() => void>();
  // A notification is one job: one idle loop fetches (waking them all made every loop of every
  // worker fetch for each job: 64 fetches a job with 4 workers of 16). A loop busy fetching when it
  // came asks again; a loop that finishes a run asks again at once.
  const wake = (all = false) => {
    notices++;
    for (const resume of [...idle]) {
      resume();
      if (!all) break;
    }
  };
  const loop = async (): Promise<void> => {
    while (!drain.signal.aborted) {
      const seen = notices;
      // pg-boss's fetch answers [] when its statement fails (a restart): the loop waits and asks again.
      const [job] = await boss
        .fetch<RunJob>(queueName, { batchSize: 1, includeMetadata: true })
        .catch(() => []);
      if (job) {
        await execute(job);
        continue;
      }
      // A job sent while the fetch was in flight: its notification came before this loop waited.
      if (notices !== seen) continue;
      await new Promise<void>((resolve) => {
        const resume = () => {
          clearTimeout(timer);
          idle.delete(resume);
          resolve();
        };
        const timer = setTimeout(resume, pollMs);
        idle.add(resume);
      });
    }
  };
  // Every job is sent with a notification: the idle loops fetch at once instead of at their next poll.
  await listener.listen(registry.tables.jobsChannel, (name) => {
    if (name === queueName) wake();
  });
  // A notification sent while the listening connection was down is lost: look again.
  listener.onReconnect(() => wake(true));
  const loops = Array.from({ length: options.concurrency ?? 8 }, () => loop());

  // Ended runs' records and traces expire: every maintenance interval, in batches.
  const ttl = options.endedRunTtlMs;
  let sweeping: Promise<void> = Promise.resolve();
  const sweeper =
    ttl === undefined
      ? undefined
      : setInterval(
          () => {
            sweeping = (async () => {
              for (let batch = 0; batch < 20; batch++)
                if ((await registry.sweep(clock.now(), ttl)).length < 500) return;
            })().catch(() => {
              // The database is away: the next interval sweeps.
            });
          },
          (options.maintenanceIntervalSeconds ?? 30) * 1_000,
        );
  sweeper?.unref?.();

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
        if (sweeper) clearInterval(sweeper);
        for (const resume of [...idle]) resume();
        const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
        const timer = setTimeout(() => drainNow.abort(), drainTimeoutMs);
        try {
          // Each loop ends once its run in flight has stopped at a step boundary and is settled.
          await Promise.all(loops);
        } finally {
          clearTimeout(timer);
        }
        await sweeping;
        await boss.stop({ graceful: true, wait: true, timeout: 5_000 });
        await bossConnection.close();
        await listener.close();
        await events.close();
        if (owned) await pool.end();
      })();
      return closing;
    },
  };
}

/** What pg-boss keeps of a failed execution (its `output`): the error's name, code and message. */
function errorOutput(error: unknown): object {
  const { name, code, message } = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  return {
    name: typeof name === 'string' ? name : 'Error',
    ...(typeof code === 'string' ? { code } : {}),
    message: typeof message === 'string' ? message.slice(0, 2_000) : String(error),
  };
}
