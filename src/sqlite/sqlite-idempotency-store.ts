import type BetterSqlite3 from 'better-sqlite3';
import {
  decideReserve,
  type FinishRequest,
  type IdempotencyStore,
  parseStored as parse,
  type ReserveOutcome,
  type ReserveRequest,
  type StoredFailure,
} from '../idempotency/store.js';
import { openDatabase, type SqliteTarget } from './open-database.js';

interface Row {
  fingerprint: string;
  status: string;
  token: string;
  lease_until: number;
  expires_at: number;
  result: string | null;
  failure: string | null;
}

/**
 * Idempotency records in SQLite (the embedded default): one file, WAL mode, every operation in an
 * IMMEDIATE transaction, so processes on one machine sharing the file never both win a key.
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #reserve: (request: ReserveRequest) => ReserveOutcome;
  readonly #get: BetterSqlite3.Statement<[string], Row>;
  readonly #finish: BetterSqlite3.Statement<[string, string | null, string | null, number, string, string]>;
  readonly #release: BetterSqlite3.Statement<[string, string]>;
  readonly #expire: BetterSqlite3.Statement<[number, string, string]>;

  /**
   * @param options.synchronous `full` (default) survives power loss; `normal` survives a killed
   *   process (SIGKILL, OOM) but may lose the last records on an OS crash, for about 2× throughput.
   */
  constructor(options: SqliteTarget & { synchronous?: 'full' | 'normal' }) {
    const opened = openDatabase(options, 'reins_idempotency');
    const table = opened.table;
    this.#db = opened.db;
    this.#owned = opened.owned;
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    this.#db.pragma('busy_timeout = 10000');
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, token TEXT NOT NULL,
        lease_until INTEGER NOT NULL, expires_at INTEGER NOT NULL, result TEXT, failure TEXT)`,
    );
    this.#get = this.#db.prepare(
      `SELECT fingerprint, status, token, lease_until, expires_at, result, failure FROM ${table} WHERE key = ?`,
    );
    const upsert = this.#db.prepare(
      `INSERT INTO ${table} (key, fingerprint, status, token, lease_until, expires_at, result, failure) VALUES (?, ?, 'in_progress', ?, ?, ?, NULL, NULL)
       ON CONFLICT(key) DO UPDATE SET fingerprint = excluded.fingerprint, status = 'in_progress', token = excluded.token,
         lease_until = excluded.lease_until, expires_at = excluded.expires_at, result = NULL, failure = NULL`,
    );
    const takeOver = this.#db.prepare(`UPDATE ${table} SET token = ?, lease_until = ? WHERE key = ?`);
    this.#finish = this.#db.prepare(
      `UPDATE ${table} SET status = ?, result = ?, failure = ?, expires_at = ? WHERE key = ? AND token = ? AND status = 'in_progress'`,
    );
    this.#release = this.#db.prepare(
      `DELETE FROM ${table} WHERE key = ? AND token = ? AND status = 'in_progress'`,
    );
    this.#expire = this.#db.prepare(
      `UPDATE ${table} SET lease_until = ? WHERE key = ? AND token = ? AND status = 'in_progress'`,
    );
    const reserve = this.#db.transaction((request: ReserveRequest): ReserveOutcome => {
      const row = this.#get.get(request.key);
      const record = row && {
        fingerprint: row.fingerprint,
        status: row.status,
        leaseUntilMs: row.lease_until,
        expiresAtMs: row.expires_at,
        result: row.status === 'completed' ? parse(row.result, request.key) : undefined,
        failure: row.status === 'failed' ? (parse(row.failure, request.key) as StoredFailure) : undefined,
      };
      const decision = decideReserve(record, request);
      if (decision === 'insert') {
        upsert.run(
          request.key,
          request.fingerprint,
          request.token,
          request.nowMs + request.leaseMs,
          request.nowMs + request.retentionMs,
        );
        return { kind: 'reserved' };
      }
      if (decision === 'take_over') {
        takeOver.run(request.token, request.nowMs + request.leaseMs, request.key);
        return { kind: 'taken_over' };
      }
      return decision;
    });
    this.#reserve = (request) => reserve.immediate(request);
  }

  async reserve(request: ReserveRequest): Promise<ReserveOutcome> {
    return this.#reserve(request);
  }

  async complete(request: FinishRequest & { result: unknown }): Promise<boolean> {
    return this.#done(request, 'completed', JSON.stringify(request.result ?? null), null);
  }

  async fail(request: FinishRequest & { failure: StoredFailure }): Promise<boolean> {
    return this.#done(request, 'failed', null, JSON.stringify(request.failure));
  }

  async release(request: { key: string; token: string }): Promise<boolean> {
    return this.#release.run(request.key, request.token).changes === 1;
  }

  async expireLease(request: { key: string; token: string; nowMs: number }): Promise<boolean> {
    return this.#expire.run(request.nowMs, request.key, request.token).changes === 1;
  }

  close(): void {
    if (this.#owned) this.#db.close();
  }

  #done(request: FinishRequest, status: string, result: string | null, failure: string | null): boolean {
    if (
      this.#finish.run(
        status,
        result,
        failure,
        request.nowMs + request.retentionMs,
        request.key,
        request.token,
      ).changes === 1
    )
      return true;
    // Already recorded by this holder (a tool that committed the record in its own transaction).
    const row = this.#get.get(request.key);
    return row !== undefined && row.token === request.token && row.status === status;
  }
}
