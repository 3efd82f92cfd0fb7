import type pg from 'pg';
import type { ApprovalVerdict } from '../loop/approval.js';
import { checkVerdicts } from '../queue/check-verdicts.js';
import type {
  CancelResult,
  RunQueue,
  RunRecord,
  RunRecordStatus,
  RunRequest,
  VerdictResult,
} from '../queue/run-queue.js';
import { queuedRecord, type RunJob } from '../queue/run-stores.js';
import { type Clock, type IdGenerator, randomIds, systemClock } from '../time/clock.js';
import {
  bossDb,
  defaultQueueName,
  defaultRetryLimit,
  onClient,
  PgBoss,
  type PgBossConnectionOptions,
  poolFor,
  startBoss,
} from './pgboss-connection.js';
import { PostgresRunEventLog } from './postgres-run-event-log.js';
import { PostgresRunRegistry } from './postgres-run-registry.js';
import { inTransaction, jsonbData } from './tables.js';

/** Options of {@link PgBossRunQueue}. */
export interface PgBossRunQueueOptions extends PgBossConnectionOptions {
  /** @default systemClock */
  clock?: Clock;
  /** @default random UUIDs (`run_…`) */
  generateId?: IdGenerator;
  /**
   * The lease of a job a worker took: the worker renews it every quarter of this while the run
   * goes on (a run may take as long as it needs), and a job whose lease lapsed (its worker died or
   * lost the database) is failed by pg-boss's maintenance and handed out again, to a worker that
   * resumes the run from its last checkpoint. A crashed worker's run waits this long, plus up to
   * the workers' `maintenanceIntervalSeconds`, before it goes on elsewhere.
   * @default 60
   */
  expireInSeconds?: number;
  /** How many times a lost or failed job is handed out again. @default 10 */
  retryLimit?: number;
}

/**
 * Runs as pg-boss jobs on PostgreSQL: the queue for a deployment without Redis. A run's record and
 * its job are written in one transaction (a run is never queued without its job, nor a job left
 * for a refused id); so are a verdict's move back to `queued` and its resume job. The job carries
 * the request (names and data, no functions). Records and traces live in PostgreSQL
 * ({@link PostgresRunRegistry}, {@link PostgresRunEventLog}); run workers with `createPgBossWorker`.
 *
 * pg-boss 10 (its `engines` says Node ≥ 20; 11 and 12 need Node 22): workers poll for jobs, and a
 * notification sent with each job wakes them at once. A worker renews the lease of the job it runs;
 * one that dies mid-run is noticed when the lease lapses (`expireInSeconds`), at pg-boss's next
 * maintenance.
 *
 * @example
 * ```ts
 * import { PgBossRunQueue } from 'reins/pgboss';
 * const queue = new PgBossRunQueue({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
 * const queued = await queue.enqueue({ agent: 'support', input: 'Refund order 1001', actor: { id: 'ana' } });
 * console.log(queued.ok, (await queue.registry.get(queued.runId))?.status); // true 'queued'
 * await queue.close();
 * ```
 */
export class PgBossRunQueue implements RunQueue {
  readonly registry: PostgresRunRegistry;
  readonly events: PostgresRunEventLog;
  readonly boss: PgBoss;
  readonly #bossDb: ReturnType<typeof bossDb>;
  readonly queueName: string;
  readonly #pool: pg.Pool;
  readonly #owned: boolean;
  readonly #clock: Clock;
  readonly #generateId: IdGenerator;
  readonly #jobOptions: { expireInSeconds: number; retryLimit: number };
  #started: Promise<void> | undefined;

  constructor(options: PgBossRunQueueOptions = {}) {
    const { pool, owned } = poolFor(options);
    this.#pool = pool;
    this.#owned = owned;
    this.#clock = options.clock ?? systemClock;
    this.#generateId = options.generateId ?? randomIds;
    this.queueName = options.queueName ?? defaultQueueName;
    this.#bossDb = bossDb(pool);
    const tables = {
      ...(options.table === undefined ? {} : { table: options.table }),
      ...(options.schema === undefined ? {} : { schema: options.schema }),
    };
    this.registry = new PostgresRunRegistry({ pool, ...tables });
    this.events = new PostgresRunEventLog({ pool, ...tables });
    // A producer: no maintenance or cron here (workers supervise).
    this.boss = new PgBoss({
      db: this.#bossDb.db,
      schema: options.bossSchema ?? 'pgboss',
      supervise: false,
      schedule: false,
    });
    this.boss.on('error', () => {
      // Connection trouble surfaces on the calls that need the database.
    });
    this.#jobOptions = {
      expireInSeconds: options.expireInSeconds ?? 60,
      retryLimit: options.retryLimit ?? defaultRetryLimit,
    };
  }

  #ready(): Promise<void> {
    this.#started ??= (async () => {
      await Promise.all([startBoss(this.boss, this.queueName), this.registry.ensureSchema()]);
    })().catch((error: unknown) => {
      this.#started = undefined;
      throw error;
    });
    return this.#started;
  }

  /** Runs `work` in one transaction on one connection, committed when it returns true. */
  async #transaction(work: (client: pg.PoolClient) => Promise<boolean>): Promise<boolean> {
    await this.#ready();
    // Rolled back, not committed, when `work` says false: thrown out of the transaction and caught.
    const rollBack = Symbol('roll back');
    try {
      return await inTransaction(this.#pool, async (client) => {
        if (!(await work(client))) throw rollBack;
        return true;
      });
    } catch (error) {
      if (error === rollBack) return false;
      throw error;
    }
  }

  /** Adds `job` on `client`'s transaction and wakes the workers when it commits. */
  async #send(client: pg.PoolClient, job: RunJob, priority?: number): Promise<void> {
    await this.boss.send(this.queueName, jsonbData(job), {
      ...this.#jobOptions,
      // A store that is down fails the job: retried after 1, 2, 4 … s (about 17 minutes for 10).
      retryDelay: 1,
      retryBackoff: true,
      // reins's priority is BullMQ's (lower first, 0 none and first); pg-boss runs higher first.
      ...(priority ? { priority: -priority } : {}),
      db: onClient(client),
    });
    await client.query('SELECT pg_notify($1, $2)', [this.registry.tables.jobsChannel, this.queueName]);
  }

  async enqueue(
    request: RunRequest,
  ): Promise<{ ok: true; runId: string } | { ok: false; reason: 'duplicate_run'; runId: string }> {
    const runId = request.runId ?? this.#generateId('run');
    const created = await this.#transaction(async (client) => {
      const made = await this.registry
        .on(client)
        .create(queuedRecord(runId, request, this.#clock.now()), request);
      if (made) await this.#send(client, { runId, request }, request.priority);
      return made;
    });
    return created ? { ok: true, runId } : { ok: false, reason: 'duplicate_run', runId };
  }

  async cancel(runId: string, by: string): Promise<CancelResult> {
    await this.#ready();
    const outcome = { kind: 'cancelled' as const, reason: `cancelled by ${by}` };
    // Each move is a compare-and-set from the one status it was decided on: a record that moved
    // between the read and the write is read again and decided again.
    for (let attempt = 0; attempt < 8; attempt++) {
      const record = await this.registry.get(runId);
      if (!record) return { ok: false, reason: 'not_found' };
      if (record.status === 'ended') return { ok: false, reason: 'already_ended' };
      if (record.status === 'cancelling') {
        await this.#notifyCancel(runId);
        return { ok: true, status: 'cancelling' };
      }
      if (record.status === 'queued' || record.status === 'awaiting_approval') {
        // Nothing holds it: it ends here. Its job, if a worker takes it, finds it ended and skips it.
        const from: RunRecordStatus[] = [record.status];
        const ended = await this.registry.update(
          runId,
          { status: 'ended', outcome, pendingApprovals: undefined, updatedAt: this.#clock.now() },
          from,
        );
        if (!ended) continue;
        await this.events.end(runId);
        return { ok: true, status: 'ended' };
      }
      const cancelling = await this.registry.update(
        runId,
        { status: 'cancelling', updatedAt: this.#clock.now() },
        [record.status],
      );
      if (!cancelling) continue;
      await this.#notifyCancel(runId);
      return { ok: true, status: 'cancelling' };
    }
    throw new Error(`cancel ${runId}: its record changed under each of 8 attempts`);
  }

  async #notifyCancel(runId: string): Promise<void> {
    await this.#pool.query('SELECT pg_notify($1, $2)', [this.registry.tables.cancelChannel, runId]);
  }

  async submitVerdicts(runId: string, verdicts: ApprovalVerdict[]): Promise<VerdictResult> {
    await this.#ready();
    const record = await this.registry.get(runId);
    const checked = checkVerdicts(record, verdicts);
    if (!checked.ok || !record) return checked;
    // The compare-and-set from awaiting_approval and the resume job commit together: of two
    // concurrent submissions one resumes the run, and a resumed run always has its job.
    let answer: VerdictResult = { ok: false, reason: 'not_awaiting_approval' };
    const moved = await this.#transaction(async (client) => {
      // The record as it is now, locked until this commits: the verdicts are checked against the
      // pause the run is in now (it may have moved on to another since the read above).
      const locked = await client.query<{ record: RunRecord }>(
        `SELECT record FROM ${this.registry.tables.runs} WHERE run_id = $1 FOR UPDATE`,
        [runId],
      );
      const current = checkVerdicts(locked.rows[0]?.record, verdicts);
      if (!current.ok) {
        answer = current;
        return false;
      }
      const registry = this.registry.on(client);
      const updated = await registry.update(runId, { status: 'queued', updatedAt: this.#clock.now() }, [
        'awaiting_approval',
      ]);
      if (!updated) return false;
      const request = (await registry.request(runId)) ?? {
        agent: record.agent,
        input: '',
        actor: { id: record.actorId },
        tenant: record.tenant,
      };
      // The resumed run keeps its place: the priority it was queued with.
      await this.#send(client, { runId, request, verdicts }, request.priority);
      return true;
    });
    return moved ? { ok: true } : answer;
  }

  async close(): Promise<void> {
    await this.events.close();
    if (this.#started) await this.boss.stop({ graceful: false, wait: true }).catch(() => {});
    await this.#bossDb.close();
    if (this.#owned) await this.#pool.end();
  }
}
