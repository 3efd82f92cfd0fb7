import type BetterSqlite3 from 'better-sqlite3';
import type { LegacyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { parseRunState, type RunState } from '../loop/run-state.js';
import { openDatabase, type SqliteTarget } from './open-database.js';

/** @property table @default 'reins_checkpoints' */
export type SqliteCheckpointStoreOptions = SqliteTarget;

/**
 * Run checkpoints in SQLite (better-sqlite3 12): one row per run, replaced atomically at each step.
 * WAL mode with `synchronous = FULL`, so a saved step survives a killed process and a power cut, and
 * several processes on one machine can share the file.
 */
export class SqliteCheckpointStore implements LegacyCheckpointStore {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #save: BetterSqlite3.Statement<[string, string, number, string, number]>;
  readonly #load: BetterSqlite3.Statement<[string], { state: string }>;
  readonly #list: BetterSqlite3.Statement<
    [],
    { run_id: string; status: string; step: number; updated_at: number }
  >;

  constructor(options: SqliteCheckpointStoreOptions) {
    const opened = openDatabase(options, 'reins_checkpoints');
    const table = opened.table;
    this.#db = opened.db;
    this.#owned = opened.owned;
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, step INTEGER NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL)`,
    );
    this.#save = this.#db.prepare(
      `INSERT INTO ${table} (run_id, status, step, state, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, step = excluded.step, state = excluded.state, updated_at = excluded.updated_at`,
    );
    this.#load = this.#db.prepare(`SELECT state FROM ${table} WHERE run_id = ?`);
    this.#list = this.#db.prepare(
      `SELECT run_id, status, step, updated_at FROM ${table} ORDER BY updated_at DESC`,
    );
  }

  save(state: RunState): void {
    this.#save.run(state.runId, state.status, state.step, JSON.stringify(state), state.updatedAt);
  }

  load(runId: string): RunState | undefined {
    const row = this.#load.get(runId);
    return row ? parseRunState(row.state) : undefined;
  }

  /** Every run with its status and last completed step, newest first. */
  list(): { runId: string; status: string; step: number; updatedAt: number }[] {
    return this.#list
      .all()
      .map((row) => ({ runId: row.run_id, status: row.status, step: row.step, updatedAt: row.updated_at }));
  }

  close(): void {
    if (this.#owned) this.#db.close();
  }
}
