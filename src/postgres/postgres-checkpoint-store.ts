import type { Client, Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { type CheckpointLogEntry, commitBody, replayCheckpointLog } from '../checkpoint/checkpoint-log.js';
import {
  type CheckpointCommit,
  type CheckpointStore,
  type CommitResult,
  checkCommit,
} from '../checkpoint/checkpoint-store.js';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { RunState } from '../loop/run-state.js';

/** Options of {@link PostgresCheckpointStore}. */
export interface PostgresCheckpointStoreOptions {
  /**
   * Where queries go: a `pg.Pool` (the usual case: every worker shares one table through its own
   * pool), or a connected `pg.Client` / `PoolClient`. Each commit is one statement, so it is atomic
   * and durable on its own; on a client inside a transaction you opened, it is durable when you commit.
   */
  pool: Pick<Pool, 'query'> | Pick<PoolClient, 'query'> | Pick<Client, 'query'>;
  /**
   * The heads table's name; the log goes in `<table>_log`. A plain SQL identifier.
   * @default 'reins_checkpoints'
   */
  table?: string;
  /** A schema to put both tables in (created if missing). @default the connection's search_path */
  schema?: string;
  /**
   * Create the schema, tables and index on first use when they are missing. Turn off where the
   * application's role may not run DDL, and call {@link PostgresCheckpointStore.ensureSchema} (or your
   * migrations) once instead.
   * @default true
   */
  createTables?: boolean;
}

/** One run as {@link PostgresCheckpointStore.list} shows it. */
export interface PostgresCheckpointRun {
  runId: string;
  status: RunState['status'];
  step: number;
  revision: number;
  updatedAt: number;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,58}$/;

/**
 * Run checkpoints in PostgreSQL, shared by every worker of a fleet, under the
 * {@link CheckpointStore} contract.
 *
 * - `<table>` holds one head row per run (revision, status, step, updated_at); `<table>_log` is
 *   append-only, one row per commit (run_id, revision, snapshot or delta, the JSON text), keyed by
 *   (run_id, revision).
 * - `commit` is one statement, so one round trip and one transaction: the head moves from
 *   `expectedRevision` to `revision` only if it is at `expectedRevision` (an `UPDATE … WHERE
 *   revision = $expected`, or `INSERT … ON CONFLICT DO UPDATE … WHERE` for a snapshot, which also
 *   takes a run the table has never seen), and the log row is written only when the head moved.
 *   Writers on other connections queue on the head row's lock and re-check the revision after the
 *   winner commits, so of N writers at one revision exactly one applies; the others get
 *   `{ ok: false, currentRevision }`. A snapshot deletes the run's older log rows in the same
 *   statement: storage stays at the last snapshot and the deltas after it.
 * - `load` is one query (one snapshot of the database): the head's revision, the last snapshot and
 *   the deltas after it. A log that does not reach the head is `ReinsError('corrupt_state')`.
 * - Durable when `commit` resolves as far as the server's settings make a committed transaction
 *   durable: with PostgreSQL's defaults (`fsync = on`, `synchronous_commit = on`) the WAL is flushed
 *   before the statement returns; `synchronous_commit = off` can lose the last commits on a server
 *   crash (never half of one).
 * - New in this version: there are no pre-revision rows to read. `save(state)` (the older
 *   contract, no compare-and-set) writes a snapshot at the next revision.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { runAgent } from 'reins';
 * import { PostgresCheckpointStore } from 'reins/postgres';
 * import { scriptedModel } from 'reins/testing';
 *
 * const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
 * const checkpoint = new PostgresCheckpointStore({ pool, schema: 'agents' });
 * await checkpoint.ensureSchema();
 * const result = await runAgent({
 *   model: scriptedModel([{ text: 'Done.' }]),
 *   input: 'Summarize the ticket.',
 *   runId: 'ticket-42',
 *   checkpoint,
 * });
 * // Any worker, any machine: resume from the last committed step.
 * const saved = await checkpoint.load('ticket-42');
 * console.log(result.outcome.kind, saved?.revision);
 * await pool.end();
 * ```
 */
export class PostgresCheckpointStore implements CheckpointStore {
  readonly #query: <Row extends QueryResultRow>(config: QueryConfig) => Promise<QueryResult<Row>>;
  readonly #heads: string;
  readonly #log: string;
  readonly #schema: string | undefined;
  readonly #table: string;
  readonly #createTables: boolean;
  readonly #sql: ReturnType<typeof statements>;
  #ready: Promise<void> | undefined;
  #isReady = false;

  constructor(options: PostgresCheckpointStoreOptions) {
    const table = options.table ?? 'reins_checkpoints';
    if (!identifier.test(table))
      throw new ConfigurationError(
        'table',
        `"${table}" is not a plain SQL identifier of at most 59 characters`,
      );
    if (options.schema !== undefined && !identifier.test(options.schema))
      throw new ConfigurationError('schema', `"${options.schema}" is not a plain SQL identifier`);
    const target = options.pool as Pick<Pool, 'query'>;
    if (typeof target?.query !== 'function')
      throw new ConfigurationError('pool', 'needs a pg.Pool, pg.Client or PoolClient');
    this.#query = <Row extends QueryResultRow>(config: QueryConfig) => target.query<Row>(config);
    this.#schema = options.schema;
    this.#table = table;
    const qualified = options.schema === undefined ? table : `${options.schema}.${table}`;
    this.#heads = qualified;
    this.#log = `${qualified}_log`;
    this.#createTables = options.createTables ?? true;
    this.#sql = statements(this.#heads, this.#log);
  }

  /**
   * Creates the schema (when one is named), both tables and the status index if they are missing.
   * Safe to call from many workers at once (an advisory lock serializes them). Called on first use
   * unless `createTables` is false.
   */
  async ensureSchema(): Promise<void> {
    const lockKey = `reins_checkpoints:${this.#heads}`;
    // One simple-protocol query: its statements run as one transaction, under the lock.
    await this.#query({
      text: [
        `SELECT pg_advisory_xact_lock(hashtext('${lockKey}'))`,
        this.#schema === undefined ? '' : `CREATE SCHEMA IF NOT EXISTS ${this.#schema}`,
        `CREATE TABLE IF NOT EXISTS ${this.#heads} (run_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, status TEXT NOT NULL, step INTEGER NOT NULL, updated_at BIGINT NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS ${this.#log} (run_id TEXT NOT NULL, revision INTEGER NOT NULL, snapshot BOOLEAN NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, revision))`,
        `CREATE INDEX IF NOT EXISTS ${this.#table}_status ON ${this.#heads} (status, updated_at DESC)`,
      ]
        .filter(Boolean)
        .join(';\n'),
    });
    this.#isReady = true;
  }

  /** Applies `commit` when the run's head is at `commit.expectedRevision` or the run is new. */
  async commit(commit: CheckpointCommit): Promise<CommitResult> {
    checkCommit(commit);
    if (!this.#isReady) await this.#ensureReady();
    const body = commitBody(commit);
    const values = [
      commit.runId,
      commit.expectedRevision,
      commit.revision,
      commit.status,
      commit.step,
      commit.updatedAt,
      body,
    ];
    for (let attempt = 0; attempt < 3; attempt++) {
      const applied = await this.#query(
        commit.snapshot
          ? { name: this.#sql.snapshotName, text: this.#sql.snapshot, values }
          : { name: this.#sql.deltaName, text: this.#sql.delta, values },
      );
      if (applied.rowCount === 1) return { ok: true };
      // Refused: read the head again (this statement's snapshot may predate the winner's commit).
      const head = await this.#query<{ revision: number }>({
        name: this.#sql.headName,
        text: this.#sql.head,
        values: [commit.runId],
      });
      const current = head.rows[0]?.revision;
      if (current !== undefined) return { ok: false, currentRevision: current };
      if (!commit.snapshot)
        throw new ReinsError(
          'corrupt_state',
          `checkpoint delta for ${commit.runId} has no snapshot to apply to`,
        );
      // A snapshot refused for a run that has no head any more (deleted in between): try again.
    }
    throw new ReinsError('checkpoint_conflict', `checkpoint for ${commit.runId} kept changing under commit`);
  }

  /**
   * Writes a whole state as a new snapshot at the next revision, without compare-and-set (the
   * older contract, for callers that only `save`).
   */
  async save(state: RunState): Promise<void> {
    if (!this.#isReady) await this.#ensureReady();
    await this.#query({
      name: this.#sql.saveName,
      text: this.#sql.save,
      values: [state.runId, state.status, state.step, state.updatedAt, JSON.stringify(state)],
    });
  }

  /** The latest committed state with its `revision`, or undefined for an unknown run. */
  async load(runId: string): Promise<RunState | undefined> {
    if (!this.#isReady) await this.#ensureReady();
    const { rows } = await this.#query<{
      head: number;
      revision: number | null;
      snapshot: boolean | null;
      body: string | null;
    }>({ name: this.#sql.loadName, text: this.#sql.load, values: [runId] });
    const first = rows[0];
    if (!first) return undefined;
    let snapshot: CheckpointLogEntry | undefined;
    const deltas: CheckpointLogEntry[] = [];
    for (const row of rows) {
      if (row.revision === null || row.body === null) break;
      if (row.snapshot && snapshot === undefined) snapshot = { revision: row.revision, body: row.body };
      else deltas.push({ revision: row.revision, body: row.body });
    }
    return replayCheckpointLog(runId, first.head, snapshot, deltas);
  }

  /** Runs newest first, optionally only those with `status`, at most `limit` (default 100). */
  async list(filter: { status?: RunState['status']; limit?: number } = {}): Promise<PostgresCheckpointRun[]> {
    if (!this.#isReady) await this.#ensureReady();
    const limit = filter.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1)
      throw new ConfigurationError('limit', `must be a positive integer, got ${String(limit)}`);
    const { rows } = await this.#query<{
      run_id: string;
      status: RunState['status'];
      step: number;
      revision: number;
      updated_at: string;
    }>({
      text: `SELECT run_id, status, step, revision, updated_at FROM ${this.#heads}
        WHERE $1::text IS NULL OR status = $1 ORDER BY updated_at DESC, run_id LIMIT $2`,
      values: [filter.status ?? null, limit],
    });
    return rows.map((row) => ({
      runId: row.run_id,
      status: row.status,
      step: row.step,
      revision: row.revision,
      updatedAt: Number(row.updated_at),
    }));
  }

  /** Deletes a run's head and log; true when it had one. */
  async delete(runId: string): Promise<boolean> {
    if (!this.#isReady) await this.#ensureReady();
    const result = await this.#query({
      text: `WITH gone AS (DELETE FROM ${this.#log} WHERE run_id = $1) DELETE FROM ${this.#heads} WHERE run_id = $1`,
      values: [runId],
    });
    return result.rowCount === 1;
  }

  #ensureReady(): Promise<void> {
    if (!this.#createTables) {
      this.#isReady = true;
      return Promise.resolve();
    }
    this.#ready ??= this.ensureSchema().catch((error: unknown) => {
      // A failed creation (server down) is tried again on the next call.
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }
}

/** The store's statements, named per table so each connection parses and plans them once. */
function statements(heads: string, log: string) {
  // PostgreSQL cuts names at 63 characters (two tables' statements could then collide): a hash of the table.
  const name = (what: string) => `reins-checkpoint-${what}-${fnv1a(heads)}`;
  return {
    snapshotName: name('snapshot'),
    // New run, or head at $2: move the head, drop the run's older log rows, append the snapshot.
    // (The statement's parts share one snapshot: the DELETE does not see the row the INSERT adds.)
    snapshot: `WITH head AS (
        INSERT INTO ${heads} AS h (run_id, revision, status, step, updated_at) VALUES ($1, $3, $4, $5, $6)
        ON CONFLICT (run_id) DO UPDATE SET revision = EXCLUDED.revision, status = EXCLUDED.status,
          step = EXCLUDED.step, updated_at = EXCLUDED.updated_at
        WHERE h.revision = $2::integer
        RETURNING h.run_id
      ), pruned AS (
        DELETE FROM ${log} WHERE run_id = $1 AND EXISTS (SELECT 1 FROM head)
      )
      INSERT INTO ${log} (run_id, revision, snapshot, body) SELECT run_id, $3, TRUE, $7 FROM head`,
    deltaName: name('delta'),
    // Only an existing run at $2 takes a delta: a delta for an unknown run has nothing to apply to.
    delta: `WITH head AS (
        UPDATE ${heads} SET revision = $3, status = $4, step = $5, updated_at = $6
        WHERE run_id = $1 AND revision = $2::integer
        RETURNING run_id
      )
      INSERT INTO ${log} (run_id, revision, snapshot, body) SELECT run_id, $3, FALSE, $7 FROM head`,
    headName: name('head'),
    head: `SELECT revision FROM ${heads} WHERE run_id = $1`,
    saveName: name('save'),
    save: `WITH head AS (
        INSERT INTO ${heads} AS h (run_id, revision, status, step, updated_at) VALUES ($1, 1, $2, $3, $4)
        ON CONFLICT (run_id) DO UPDATE SET revision = h.revision + 1, status = EXCLUDED.status,
          step = EXCLUDED.step, updated_at = EXCLUDED.updated_at
        RETURNING h.run_id, h.revision
      ), pruned AS (
        DELETE FROM ${log} WHERE run_id = $1
      )
      INSERT INTO ${log} (run_id, revision, snapshot, body) SELECT run_id, revision, TRUE, $5 FROM head`,
    loadName: name('load'),
    load: `SELECT h.revision AS head, l.revision, l.snapshot, l.body
      FROM ${heads} h
      LEFT JOIN ${log} l ON l.run_id = h.run_id AND l.revision >= COALESCE(
        (SELECT max(s.revision) FROM ${log} s WHERE s.run_id = $1 AND s.snapshot), 0)
      WHERE h.run_id = $1
      ORDER BY l.revision`,
  };
}

/** FNV-1a of `text`, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
