import type { RunRecord, RunRecordStatus, RunRequest } from '../queue/run-queue.js';
import type { RunRecordPatch, RunRecordStore } from '../queue/run-stores.js';
import {
  checkTextId,
  createTablesSql,
  jsonbText,
  once,
  type Queryable,
  type RunTables,
  retryingRead,
  retryingSetup,
  runTables,
} from './tables.js';

/** Options of {@link PostgresRunRegistry}. */
export interface PostgresRunRegistryOptions {
  /** A `pg.Pool` (or a connected client: a transaction's). */
  pool: Queryable;
  /** The records' table; the trace goes in `<table>_events` and `<table>_ended`. @default 'reins_runs' */
  table?: string;
  /** A schema for the tables (created if missing). @default the connection's search_path */
  schema?: string;
  /**
   * Create the schema and tables on first use when missing. Turn off where the role may not run DDL
   * and call {@link PostgresRunRegistry.ensureSchema} (or your migrations) once instead.
   * @default true
   */
  createTables?: boolean;
}

/**
 * Run records in PostgreSQL, shared by every worker and service of a deployment without Redis (the
 * pg-boss queue's registry). One row per run: the record as `jsonb`, its status and actor beside it
 * for the compare-and-set and the listing. Each method is one statement, so one round trip and one
 * transaction: `update` and `start` apply their change only when the row's status is one of `from`
 * (`UPDATE … WHERE status = ANY(…)`), so of two writers deciding from one status exactly one wins.
 * A run id is refused for good once created: rows are not deleted by reins. `jsonb` refuses
 * `\u0000` and unpaired surrogates, which a model's text can hold: they are stored as U+FFFD.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { PostgresRunRegistry } from 'reins/pgboss';
 * import { queuedRecord } from 'reins/queue';
 *
 * const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
 * const registry = new PostgresRunRegistry({ pool, schema: 'agents' });
 * const request = { agent: 'support', input: 'Refund order 1001', actor: { id: 'ana' } };
 * await registry.create(queuedRecord(`run-${Date.now()}`, request, Date.now()), request);
 * console.log((await registry.list({ actorId: 'ana', limit: 1 }))[0]?.status); // 'queued'
 * await pool.end();
 * ```
 */
export class PostgresRunRegistry implements RunRecordStore {
  readonly tables: RunTables;
  readonly #pool: Queryable;
  readonly #ensure: () => Promise<void>;
  readonly #createTables: boolean;

  constructor(options: PostgresRunRegistryOptions) {
    this.tables = runTables(options.table, options.schema);
    this.#pool = options.pool;
    this.#createTables = options.createTables ?? true;
    this.#ensure = once(async () => {
      await retryingSetup(() => this.#pool.query(createTablesSql(this.tables)));
    });
  }

  /** Creates the schema and tables if missing (what the first call does unless `createTables: false`). */
  ensureSchema(): Promise<void> {
    return this.#ensure();
  }

  /** The same tables through another connection: a transaction's client. */
  on(client: Queryable): PostgresRunRegistry {
    return new PostgresRunRegistry({
      pool: client,
      table: this.tables.table,
      ...(this.tables.schemaName === undefined ? {} : { schema: this.tables.schemaName }),
      createTables: false,
    });
  }

  async #ready(): Promise<void> {
    if (this.#createTables) await this.#ensure();
  }

  async create(record: RunRecord, request?: RunRequest): Promise<boolean> {
    checkTextId('runId', record.runId);
    checkTextId('actorId', record.actorId);
    await this.#ready();
    const result = await this.#pool.query(
      `INSERT INTO ${this.tables.runs} (run_id, actor_id, status, created_at, record, request)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb) ON CONFLICT (run_id) DO NOTHING`,
      [
        record.runId,
        record.actorId,
        record.status,
        record.createdAt,
        jsonbText(JSON.stringify(record)),
        request === undefined ? null : jsonbText(JSON.stringify(request)),
      ],
    );
    return result.rowCount === 1;
  }

  /** The request a run was queued with, for building its resume job. */
  async request(runId: string): Promise<RunRequest | undefined> {
    await this.#ready();
    const result = await retryingRead(() =>
      this.#pool.query<{ request: RunRequest | null }>(
        `SELECT request FROM ${this.tables.runs} WHERE run_id = $1 AND status <> 'expired'`,
        [runId],
      ),
    );
    return result.rows[0]?.request ?? undefined;
  }

  async update(
    runId: string,
    patch: RunRecordPatch,
    from?: readonly RunRecordStatus[],
  ): Promise<RunRecord | undefined> {
    // No status is one of none: refused, as the memory registry does.
    if (from?.length === 0) return undefined;
    await this.#ready();
    const set: Record<string, unknown> = {};
    const removed: string[] = [];
    for (const [field, value] of Object.entries(patch)) {
      if (field === 'runId') continue;
      if (value === undefined) removed.push(field);
      else set[field] = value;
    }
    const result = await this.#pool.query<{ record: RunRecord }>(
      `UPDATE ${this.tables.runs}
       SET record = (record || $2::jsonb) - $3::text[], status = coalesce($2::jsonb ->> 'status', status),
           actor_id = coalesce($2::jsonb ->> 'actorId', actor_id),
           created_at = coalesce(($2::jsonb ->> 'createdAt')::double precision, created_at)
       WHERE run_id = $1 AND status <> 'expired' AND ($4::text[] IS NULL OR status = ANY($4::text[]))
       RETURNING record`,
      [runId, jsonbText(JSON.stringify(set)), removed, from === undefined ? null : [...from]],
    );
    return result.rows[0]?.record;
  }

  async start(runId: string, at: number, from: readonly RunRecordStatus[]): Promise<RunRecord | undefined> {
    if (from.length === 0) return undefined;
    await this.#ready();
    const result = await this.#pool.query<{ record: RunRecord }>(
      `UPDATE ${this.tables.runs}
       SET status = 'running',
           record = record || jsonb_build_object(
             'status', 'running', 'attempts', (record ->> 'attempts')::int + 1, 'updatedAt', $2::double precision)
       WHERE run_id = $1 AND status = ANY($3::text[])
       RETURNING record`,
      [runId, at, [...from]],
    );
    return result.rows[0]?.record;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    await this.#ready();
    const result = await retryingRead(() =>
      this.#pool.query<{ record: RunRecord }>(
        `SELECT record FROM ${this.tables.runs} WHERE run_id = $1 AND status <> 'expired'`,
        [runId],
      ),
    );
    return result.rows[0]?.record;
  }

  async list(filter: { actorId: string; limit?: number }): Promise<RunRecord[]> {
    await this.#ready();
    // Newest first; creation order breaks ties, as in the memory registry.
    const result = await retryingRead(() =>
      this.#pool.query<{ record: RunRecord }>(
        `SELECT record FROM ${this.tables.runs} WHERE actor_id = $1 AND status <> 'expired'
         ORDER BY created_at DESC, ordinal DESC LIMIT $2`,
        [filter.actorId, filter.limit ?? 50],
      ),
    );
    return result.rows.map((row) => row.record);
  }

  /**
   * Expires runs that ended at least `ttlMs` before `now` (by the record's `updatedAt`), up to
   * `limit` of them: the record and the request go and the trace's events are deleted, in one
   * statement. What stays is the id, marked `expired`, and the trace's end marker: `get` and `list`
   * no longer see the run, a new run under its id is still refused, and a follow of it ends. A run
   * parked for a person (`awaiting_approval`) never expires. Rows another sweep holds are skipped,
   * so workers sweeping at once do not wait on each other. Returns the ids expired.
   */
  async sweep(now: number, ttlMs: number, limit = 500): Promise<string[]> {
    await this.#ready();
    const result = await this.#pool.query<{ run_id: string }>(
      `WITH due AS (
         SELECT run_id FROM ${this.tables.runs}
          WHERE status = 'ended' AND (record ->> 'updatedAt')::double precision <= $1
          LIMIT $2 FOR UPDATE SKIP LOCKED
       ), gone AS (
         UPDATE ${this.tables.runs} r
            SET status = 'expired', request = NULL,
                record = jsonb_build_object('runId', r.run_id, 'status', 'expired')
           FROM due WHERE r.run_id = due.run_id
         RETURNING r.run_id
       ), events AS (
         DELETE FROM ${this.tables.events} e USING gone WHERE e.run_id = gone.run_id
       )
       SELECT run_id FROM gone`,
      [now - ttlMs, limit],
    );
    return result.rows.map((row) => row.run_id);
  }
}
