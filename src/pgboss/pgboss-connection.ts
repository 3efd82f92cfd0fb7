import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Queryable } from './tables.js';

/** How reins reaches PostgreSQL for a pg-boss queue or worker. */
export interface PgBossConnectionOptions {
  /** @default process.env.REINS_POSTGRES_URL, else 'postgres://postgres@127.0.0.1:5432/postgres' */
  connectionString?: string;
  /** A pool for the run records and traces (reins closes only a pool it made). @default one made from `connectionString` */
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
export function poolFor(options: PgBossConnectionOptions): { pool: pg.Pool; owned: boolean } {
  if (options.pool) return { pool: options.pool, owned: false };
  return { pool: new pg.Pool({ connectionString: connectionString(options) }), owned: true };
}

/** A pg-boss `db` that runs its statements on `client`: a send inside the caller's transaction. */
export function onClient(client: Queryable): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[]) =>
      (await client.query(text, values as unknown[])) as unknown as { rows: unknown[] },
  } as PgBoss.Db;
}

/** Starts `boss` and makes sure the queue exists (pg-boss 10 refuses jobs for a queue not created). */
export async function startBoss(boss: PgBoss, queueName: string): Promise<void> {
  await boss.start();
  if (!(await boss.getQueue(queueName))) {
    try {
      await boss.createQueue(queueName);
    } catch (error) {
      // Another process created it between the check and the create.
      if (!(await boss.getQueue(queueName))) throw error;
    }
  }
}

export { PgBoss };
