import pg from 'pg';
import PgBoss from 'pg-boss';
import { type Queryable, retryingRead, retryingSetup } from './tables.js';

/** How reins reaches PostgreSQL for a pg-boss queue or worker. */
export interface PgBossConnectionOptions {
  /** @default process.env.REINS_POSTGRES_URL, else 'postgres://postgres@127.0.0.1:5432/postgres' */
  connectionString?: string;
  /**
   * A pool for the run records and traces (reins closes only a pool it made). Give it an `'error'`
   * listener: pg emits one when the server closes an idle connection, and without a listener it ends
   * the process. @default one made from `connectionString` (with a listener)
   */
  pool?: pg.Pool;
  /** The pg-boss queue's name; workers must use the same. @default 'reins-runs' */
  queueName?: string;
  /** pg-boss's own schema. @default 'pgboss' */
  bossSchema?: string;
  /** The run records' table (traces in `<table>_events`). @default 'reins_runs' */
  table?: string;
  /** A schema for the run tables. @default the connection's search_path */
  schema?: string;
}

export const defaultQueueName = 'reins-runs';
/** How many times a lost or failed job is handed out again, unless the queue says otherwise. */
export const defaultRetryLimit = 10;

export function connectionString(options: PgBossConnectionOptions): string {
  return (
    options.connectionString ??
    process.env['REINS_POSTGRES_URL'] ??
    'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

/** The pool to use, and whether reins made it (and so ends it). */
export function poolFor(options: PgBossConnectionOptions, max = 10): { pool: pg.Pool; owned: boolean } {
  if (options.pool) return { pool: options.pool, owned: false };
  const pool = new pg.Pool({ connectionString: connectionString(options), max });
  // An idle connection the server closes (a restart, a failover) is an 'error' on the pool: without
  // a listener it would end the process. The pool makes a new connection when one is next needed.
  pool.on('error', () => {});
  return { pool, owned: true };
}

/** A pg-boss `db` that runs its statements on `client`: a send inside the caller's transaction. */
export function onClient(client: Queryable): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[]) =>
      (await client.query(text, values as unknown[])) as unknown as { rows: unknown[] },
  } as PgBoss.Db;
}

/**
 * pg-boss's database on reins's pool: a statement whose connection was lost (a restart, a
 * failover) is tried again on another, up to 6 times over about 3 s. pg-boss 10 does not wait for
 * some of its writes (marking a job complete or failed): a rejection there would be unhandled and
 * end the process. Its statements are safe to repeat (a repeated fetch leaves a job active until it
 * expires and is handed out again; a repeated send is a second job for the run, which the executor
 * skips).
 */
export function bossDb(pool: Queryable): { db: PgBoss.Db; close(): Promise<void> } {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  // Not only reads: pg-boss's statements are safe to repeat (above).
  const run = (text: string, values: unknown[]) =>
    retryingRead(async () => (await pool.query(text, values as unknown[])) as unknown as { rows: unknown[] });
  const db = {
    executeSql: (text: string, values: unknown[]) => {
      // After close: a write pg-boss did not wait for (marking a job done) is dropped rather than
      // sent to a pool that has ended; a job left active expires and is handed out again, and the
      // worker that takes it finds the run ended.
      if (closed) return Promise.resolve({ rows: [] });
      const statement = run(text, values);
      inFlight.add(statement);
      void statement.then(
        () => inFlight.delete(statement),
        () => inFlight.delete(statement),
      );
      return statement;
    },
  } as PgBoss.Db;
  return {
    db,
    /** Waits for pg-boss's statements in flight (after `boss.stop`), then takes no more. */
    async close() {
      await Promise.allSettled([...inFlight]);
      closed = true;
    },
  };
}

/** Starts `boss` and makes sure the queue exists (pg-boss 10 refuses jobs for a queue not created). */
export async function startBoss(boss: PgBoss, queueName: string): Promise<void> {
  // pg-boss's start is not safe to call again after it failed (it answers at once, half started):
  // a caller that retries makes a new PgBoss (createPgBossWorker does).
  await boss.start();
  await retryingSetup(async () => {
    if (await boss.getQueue(queueName)) return;
    try {
      await boss.createQueue(queueName);
    } catch (error) {
      // Another process created it between the check and the create.
      if (!(await boss.getQueue(queueName))) throw error;
    }
  });
}

/**
 * Deletes a pg-boss queue and its jobs. pg-boss 10's `deleteQueue` deletes the queue's row before
 * its jobs' partition, which the jobs' foreign key refuses while any job is left: the jobs go first.
 * (Each queue is a partition of pg-boss's job table; queues left behind slow its maintenance.)
 */
export async function deleteBossQueue(boss: PgBoss, queueName: string, bossSchema = 'pgboss'): Promise<void> {
  await boss.getDb().executeSql(`DELETE FROM "${bossSchema}".job WHERE name = $1`, [queueName]);
  await boss.deleteQueue(queueName);
}

export { PgBoss };
