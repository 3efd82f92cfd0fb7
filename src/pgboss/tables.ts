import { createHash } from 'node:crypto';
import type { Client, Pool, PoolClient } from 'pg';
import { ConfigurationError } from '../errors/reins-error.js';

/** Where queries go: a `pg.Pool`, or a connected `pg.Client` / `PoolClient` (a transaction's). */
export type Queryable = Pick<Pool, 'query'> | Pick<PoolClient, 'query'> | Pick<Client, 'query'>;

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,49}$/;

/** The tables and notification channels of one run store: `<table>`, `<table>_events`, `<table>_ended`. */
export interface RunTables {
  /** The table name as given. */
  table: string;
  /** The records' table, quoted (names are kept as given: case, reserved words) and schema-qualified. */
  runs: string;
  events: string;
  ended: string;
  /** Per-tenant limits: the runs holding a slot, and each tenant's start window. */
  tenantRunning: string;
  tenantStarts: string;
  /** The schema, quoted, when one is given (created by `ensureSchema`). */
  schema: string | undefined;
  /** The schema as given. */
  schemaName: string | undefined;
  /** The actor index's name, quoted. */
  actorIndex: string;
  /** The index of ended runs by when they ended, quoted. */
  endedIndex: string;
  /**
   * LISTEN/NOTIFY channels. They are database-wide, so they name the schema and table, through a
   * hash: a channel name is at most 63 bytes, a schema and a table up to 50 characters each.
   */
  eventsChannel: string;
  cancelChannel: string;
  jobsChannel: string;
  /** Identifies the tables: two stores with the same key share them. */
  key: string;
}

const quote = (name: string) => `"${name}"`;

/** Checks the names and builds the tables' qualified names. @default table 'reins_runs' */
export function runTables(table = 'reins_runs', schema?: string): RunTables {
  if (!identifier.test(table))
    throw new ConfigurationError(
      'table',
      `"${table}" is not a plain SQL identifier of at most 50 characters`,
    );
  if (schema !== undefined && !identifier.test(schema))
    throw new ConfigurationError(
      'schema',
      `"${schema}" is not a plain SQL identifier of at most 50 characters`,
    );
  const qualified = (name: string) =>
    schema === undefined ? quote(name) : `${quote(schema)}.${quote(name)}`;
  const key = `${schema ?? ''}.${table}`;
  const channel = `reins_${createHash('sha256').update(key).digest('hex').slice(0, 24)}`;
  return {
    table,
    runs: qualified(table),
    events: qualified(`${table}_events`),
    ended: qualified(`${table}_ended`),
    tenantRunning: qualified(`${table}_tslots`),
    tenantStarts: qualified(`${table}_tstarts`),
    schema: schema === undefined ? undefined : quote(schema),
    schemaName: schema,
    actorIndex: quote(`${table}_actor`),
    endedIndex: quote(`${table}_ended_at`),
    eventsChannel: `${channel}_events`,
    cancelChannel: `${channel}_cancel`,
    jobsChannel: `${channel}_jobs`,
    key,
  };
}

/**
 * The statements that create a run store's tables (idempotent), in one implicit transaction under
 * an advisory lock: two processes starting on a fresh database at once would otherwise both try to
 * create the same types and fail.
 */
export function createTablesSql(tables: RunTables): string {
  return [
    "SELECT pg_advisory_xact_lock(hashtext('reins run tables'));",
    tables.schema === undefined ? '' : `CREATE SCHEMA IF NOT EXISTS ${tables.schema};`,
    // Timestamps as double precision: exact for every millisecond epoch, and a clock that returns
    // fractions is stored as the memory registry stores it.
    `CREATE TABLE IF NOT EXISTS ${tables.runs} (
      run_id text PRIMARY KEY,
      actor_id text NOT NULL,
      status text NOT NULL,
      created_at double precision NOT NULL,
      ordinal bigserial,
      record jsonb NOT NULL,
      request jsonb
    );`,
    `CREATE INDEX IF NOT EXISTS ${tables.actorIndex} ON ${tables.runs} (actor_id, created_at DESC, ordinal DESC);`,
    // For the sweep of ended runs (endedRunTtlMs): by when they ended, ended ones only.
    `CREATE INDEX IF NOT EXISTS ${tables.endedIndex} ON ${tables.runs}
       (((record ->> 'updatedAt')::double precision)) WHERE status = 'ended';`,
    `CREATE TABLE IF NOT EXISTS ${tables.events} (
      run_id text NOT NULL,
      seq integer NOT NULL,
      event json NOT NULL,
      PRIMARY KEY (run_id, seq)
    );`,
    `CREATE TABLE IF NOT EXISTS ${tables.ended} (run_id text PRIMARY KEY);`,
    `CREATE TABLE IF NOT EXISTS ${tables.tenantRunning} (
      tenant text NOT NULL,
      run_id text NOT NULL,
      lease_until double precision NOT NULL,
      PRIMARY KEY (tenant, run_id)
    );`,
    // Which execution holds the slot: only it renews or releases it.
    `ALTER TABLE ${tables.tenantRunning} ADD COLUMN IF NOT EXISTS owner text;`,
    `CREATE TABLE IF NOT EXISTS ${tables.tenantStarts} (
      tenant text PRIMARY KEY,
      window_end double precision NOT NULL,
      count integer NOT NULL
    );`,
  ].join('\n');
}

/** Makes sure `create` runs once per store, and again after a failure. */
export function once(create: () => Promise<void>): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () => {
    ready ??= create().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
}

/**
 * JSON text that PostgreSQL's `jsonb` takes: it refuses `\u0000` and unpaired surrogates, which
 * JSON (and every other store) allows. Each becomes U+FFFD, the replacement character: a record's
 * text loses that character, not the whole record. Only escapes that are escapes are touched (an
 * escaped backslash followed by `u0000` is text).
 */
export function jsonbText(json: string): string {
  if (!json.includes('\\u')) return json;
  return json.replace(
    /(?<!\\)((?:\\\\)*)\\u(0000|d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|d[c-f][0-9a-f]{2})/gi,
    (whole, backslashes: string, code: string, offset: number, all: string) => {
      const lower = code.toLowerCase();
      // A low surrogate that follows a high one is the pair's second half: kept.
      if (/^d[c-f]/.test(lower)) {
        const before = all.slice(Math.max(0, offset + backslashes.length - 6), offset + backslashes.length);
        if (/^\\ud[89ab][0-9a-f]{2}$/i.test(before)) return whole;
      }
      return `${backslashes}\\ufffd`;
    },
  );
}

/** `value` as `jsonb` will store it (see {@link jsonbText}): what a pg-boss job's data becomes. */
export function jsonbData<T>(value: T): object {
  return JSON.parse(jsonbText(JSON.stringify(value))) as object;
}

/**
 * Refuses an id PostgreSQL's `text` cannot hold (NUL): replacing it would make two ids one, and an
 * actor's runs someone else's.
 */
export function checkTextId(field: string, value: string): void {
  if (value.includes('\u0000'))
    throw new ConfigurationError(
      field,
      `${JSON.stringify(value)} holds a NUL character, which PostgreSQL text cannot store`,
    );
}

/** True for errors of the connection, not of the statement: the statement may be tried again. */
export function connectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (
    typeof code === 'string' &&
    (/^08/.test(code) || code === '57P01' || code === '57P02' || code === '57P03')
  )
    return true;
  if (typeof code === 'string' && ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'].includes(code))
    return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection.*(closed|ended)|Client has encountered a connection error/i.test(
    message,
  );
}

/**
 * Runs a read again on another connection when its connection was lost (a restart, a failover):
 * up to 6 tries over about 3 s. Only for statements that change nothing: a write whose reply was
 * lost may have been applied, and its caller decides.
 */
export function retryingRead<T>(read: () => Promise<T>): Promise<T> {
  return retrying(read, connectionLost);
}

/**
 * Runs `work` up to 6 times while it fails with an error `retryable` accepts, waiting 50 ms, then
 * 100, 200 … between tries (each scaled by `0.5 + jitter()` when a jitter source is given).
 */
async function retrying<T>(
  work: () => Promise<T>,
  retryable: (error: unknown) => boolean,
  jitter?: () => number,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!retryable(error) || attempt >= 5) throw error;
      const waitMs = 50 * 2 ** attempt * (jitter ? 0.5 + jitter() : 1);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/** A deadlock or a serialization failure: PostgreSQL rolled the statement back, and it may be tried again. */
export function transientConflict(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === '40P01' || code === '40001';
}

/**
 * Runs setup work (DDL, pg-boss's start and queue creation) again when PostgreSQL picked it as a
 * deadlock's victim, or lost its connection: workers starting together on a new queue take locks
 * on pg-boss's job table in different orders. Up to 6 tries, with jittered waits.
 */
export function retryingSetup<T>(work: () => Promise<T>, random: () => number = Math.random): Promise<T> {
  return retrying(work, (error) => transientConflict(error) || connectionLost(error), random);
}

/**
 * Runs `work` in one transaction on one connection of `pool`: committed when it resolves, rolled
 * back when it throws. The connection can fail between statements, and an 'error' event nobody
 * listens for would end the process: one is listened for while the client is out.
 */
export async function inTransaction<T>(
  pool: Pick<Pool, 'connect'>,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const ignore = () => {};
  client.on('error', ignore);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.off('error', ignore);
    client.release();
  }
}
