import type { Pool, PoolClient } from 'pg';
import { ConfigurationError } from '../errors/reins-error.js';
import {
  decideReserve,
  type FinishRequest,
  type IdempotencyStore,
  parseStored as parse,
  type ReserveOutcome,
  type ReserveRequest,
  type StoredFailure,
} from '../idempotency/store.js';

/** Anything that runs a query: a pool, or a client inside the caller's transaction. */
export type Queryable = Pick<Pool, 'query'> | Pick<PoolClient, 'query'>;

/**
 * Idempotency records in PostgreSQL, for a fleet. Reservations take a row lock in their own
 * transaction. `complete` can run on the caller's client inside the caller's transaction, so the
 * business write and "done" commit together or not at all.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #pool: Pool;
  readonly #table: string;

  constructor(options: { pool: Pool; table?: string }) {
    const table = options.table ?? 'reins_idempotency';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table))
      throw new ConfigurationError('table', `"${table}" is not a plain SQL identifier`);
    this.#pool = options.pool;
    this.#table = table;
  }

  /** Creates the table if it is missing. */
  async migrate(): Promise<void> {
    await this.#pool.query(
      `CREATE TABLE IF NOT EXISTS ${this.#table} (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, token TEXT NOT NULL,
        lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, result TEXT, failure TEXT)`,
    );
  }

  async reserve(request: ReserveRequest): Promise<ReserveOutcome> {
    // The common case, a new key, is one autocommitted statement; only a conflict needs a transaction.
    const fresh = await this.#pool.query({
      // Named: PostgreSQL parses and plans it once per connection.
      name: `reins-reserve-${this.#table}`,
      text: `INSERT INTO ${this.#table} (key, fingerprint, status, token, lease_until, expires_at) VALUES ($1, $2, 'in_progress', $3, $4, $5)
       ON CONFLICT (key) DO NOTHING RETURNING key`,
      values: [
        request.key,
        request.fingerprint,
        request.token,
        request.nowMs + request.leaseMs,
        request.nowMs + request.retentionMs,
      ],
    });
    if (fresh.rowCount === 1) return { kind: 'reserved' };
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      let outcome: ReserveOutcome;
      {
        const { rows } = await client.query(
          `SELECT fingerprint, status, lease_until, expires_at, result, failure FROM ${this.#table} WHERE key = $1 FOR UPDATE`,
          [request.key],
        );
        const row = rows[0] as {
          fingerprint: string;
          status: string;
          lease_until: string;
          expires_at: string;
          result: string | null;
          failure: string | null;
        };
        const decision = decideReserve(
          {
            fingerprint: row.fingerprint,
            status: row.status,
            leaseUntilMs: Number(row.lease_until),
            expiresAtMs: Number(row.expires_at),
            result: row.status === 'completed' ? parse(row.result, request.key) : undefined,
            failure: row.status === 'failed' ? (parse(row.failure, request.key) as StoredFailure) : undefined,
          },
          request,
        );
        if (decision === 'insert') {
          await client.query(
            `UPDATE ${this.#table} SET fingerprint = $2, status = 'in_progress', token = $3, lease_until = $4, expires_at = $5, result = NULL, failure = NULL WHERE key = $1`,
            [
              request.key,
              request.fingerprint,
              request.token,
              request.nowMs + request.leaseMs,
              request.nowMs + request.retentionMs,
            ],
          );
          outcome = { kind: 'reserved' };
        } else if (decision === 'take_over') {
          await client.query(`UPDATE ${this.#table} SET token = $2, lease_until = $3 WHERE key = $1`, [
            request.key,
            request.token,
            request.nowMs + request.leaseMs,
          ]);
          outcome = { kind: 'taken_over' };
        } else outcome = decision;
      }
      await client.query('COMMIT');
      return outcome;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Records the result; pass `client` to commit it inside your own transaction. */
  async complete(request: FinishRequest & { result: unknown; client?: Queryable }): Promise<boolean> {
    return this.#done(
      request.client ?? this.#pool,
      request,
      'completed',
      JSON.stringify(request.result ?? null),
      null,
    );
  }

  async fail(request: FinishRequest & { failure: StoredFailure; client?: Queryable }): Promise<boolean> {
    return this.#done(request.client ?? this.#pool, request, 'failed', null, JSON.stringify(request.failure));
  }

  async release(request: { key: string; token: string }): Promise<boolean> {
    const result = await this.#pool.query(
      `DELETE FROM ${this.#table} WHERE key = $1 AND token = $2 AND status = 'in_progress'`,
      [request.key, request.token],
    );
    return result.rowCount === 1;
  }

  async expireLease(request: { key: string; token: string; nowMs: number }): Promise<boolean> {
    const result = await this.#pool.query(
      `UPDATE ${this.#table} SET lease_until = $3 WHERE key = $1 AND token = $2 AND status = 'in_progress'`,
      [request.key, request.token, request.nowMs],
    );
    return result.rowCount === 1;
  }

  async #done(
    queryable: Queryable,
    request: FinishRequest,
    status: string,
    result: string | null,
    failure: string | null,
  ): Promise<boolean> {
    const updated = await queryable.query({
      name: `reins-finish-${this.#table}`,
      text: `UPDATE ${this.#table} SET status = $1, result = $2, failure = $3, expires_at = $4 WHERE key = $5 AND token = $6 AND status = 'in_progress'`,
      values: [status, result, failure, request.nowMs + request.retentionMs, request.key, request.token],
    });
    if (updated.rowCount === 1) return true;
    const { rows } = await queryable.query(`SELECT status, token FROM ${this.#table} WHERE key = $1`, [
      request.key,
    ]);
    const row = rows[0] as { status: string; token: string } | undefined;
    return row !== undefined && row.token === request.token && row.status === status;
  }
}
