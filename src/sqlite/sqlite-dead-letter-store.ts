import type BetterSqlite3 from 'better-sqlite3';
import type { DeadLetter, DeadLetterStore } from '../resilience/dead-letter.js';
import { openDatabase, type SqliteTarget } from './open-database.js';

/**
 * Dead letters in SQLite (the embedded default): one row per item, WAL mode so workers on one
 * machine can share the file. Adding an id again keeps its first failure time.
 */
export class SqliteDeadLetterStore implements DeadLetterStore {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #table: string;

  constructor(options: SqliteTarget) {
    const opened = openDatabase(options, 'reins_dead_letters');
    const table = opened.table;
    this.#table = table;
    this.#db = opened.db;
    this.#owned = opened.owned;
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, source TEXT NOT NULL, letter TEXT NOT NULL, first_failed_at INTEGER NOT NULL, last_failed_at INTEGER NOT NULL)`,
    );
  }

  add(letter: DeadLetter): void {
    this.#db
      .prepare(
        `INSERT INTO ${this.#table} (id, source, letter, first_failed_at, last_failed_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET letter = json_set(excluded.letter, '$.firstFailedAtMs', ${this.#table}.first_failed_at), last_failed_at = excluded.last_failed_at`,
      )
      .run(letter.id, letter.source, JSON.stringify(letter), letter.firstFailedAtMs, letter.lastFailedAtMs);
  }

  list(options: { limit?: number } = {}): DeadLetter[] {
    const rows = this.#db
      .prepare(`SELECT letter FROM ${this.#table} ORDER BY last_failed_at, id LIMIT ?`)
      .all(options.limit ?? -1) as { letter: string }[];
    return rows.map((row) => JSON.parse(row.letter) as DeadLetter);
  }

  get(id: string): DeadLetter | undefined {
    const row = this.#db.prepare(`SELECT letter FROM ${this.#table} WHERE id = ?`).get(id) as
      | { letter: string }
      | undefined;
    return row ? (JSON.parse(row.letter) as DeadLetter) : undefined;
  }

  release(id: string): DeadLetter | undefined {
    const row = this.#db.prepare(`DELETE FROM ${this.#table} WHERE id = ? RETURNING letter`).get(id) as
      | { letter: string }
      | undefined;
    return row ? (JSON.parse(row.letter) as DeadLetter) : undefined;
  }

  purge(): number {
    return this.#db.prepare(`DELETE FROM ${this.#table}`).run().changes;
  }

  count(): number {
    return (this.#db.prepare(`SELECT count(*) AS n FROM ${this.#table}`).get() as { n: number }).n;
  }

  close(): void {
    if (this.#owned) this.#db.close();
  }
}
