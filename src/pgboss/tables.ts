import type { Client, Pool, PoolClient } from 'pg';
import { ConfigurationError } from '../errors/reins-error.js';

/** Where queries go: a `pg.Pool`, or a connected `pg.Client` / `PoolClient` (a transaction's). */
export type Queryable = Pick<Pool, 'query'> | Pick<PoolClient, 'query'> | Pick<Client, 'query'>;

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,49}$/;

/** The tables and notification channels of one run store: `<table>`, `<table>_events`, `<table>_ended`. */
export interface RunTables {
  /** The table name as given. */
  table: string;
  /** The records' table, schema-qualified when a schema is given. */
  runs: string;
  events: string;
  ended: string;
  /** The schema, when one is given (created by `ensureSchema`). */
  schema: string | undefined;
  /** LISTEN/NOTIFY channels (database-wide, so they carry the schema and table). */
  eventsChannel: string;
  cancelChannel: string;
  jobsChannel: string;
  /** Identifies the tables: two stores with the same key share them. */
  key: string;
}

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
  const qualified = (name: string) => (schema === undefined ? name : `${schema}.${name}`);
  const key = `${schema ?? ''}.${table}`;
  return {
    table,
    runs: qualified(table),
    events: qualified(`${table}_events`),
    ended: qualified(`${table}_ended`),
    schema,
    eventsChannel: `${key}.events`,
    cancelChannel: `${key}.cancel`,
    jobsChannel: `${key}.jobs`,
    key,
  };
}

/** The statements that create a run store's tables (idempotent). */
export function createTablesSql(tables: RunTables): string {
  return [
    tables.schema === undefined ? '' : `CREATE SCHEMA IF NOT EXISTS ${tables.schema};`,
    `CREATE TABLE IF NOT EXISTS ${tables.runs} (
      run_id text PRIMARY KEY,
      actor_id text NOT NULL,
      status text NOT NULL,
      created_at bigint NOT NULL,
      ordinal bigserial,
      record jsonb NOT NULL,
      request jsonb
    );`,
    `CREATE INDEX IF NOT EXISTS ${tables.runs.replace('.', '_')}_actor ON ${tables.runs} (actor_id, created_at DESC, ordinal DESC);`,
    `CREATE TABLE IF NOT EXISTS ${tables.events} (
      run_id text NOT NULL,
      seq integer NOT NULL,
      event json NOT NULL,
      PRIMARY KEY (run_id, seq)
    );`,
    `CREATE TABLE IF NOT EXISTS ${tables.ended} (run_id text PRIMARY KEY);`,
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
