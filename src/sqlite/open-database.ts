import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { ConfigurationError } from '../errors/reins-error.js';

/** What every SQLite store takes: a file path or an open database, and a table name. */
export interface SqliteTarget {
  /** A database file path, or an open better-sqlite3 database (the store will not close it). */
  database: string | BetterSqlite3.Database;
  table?: string;
}

/**
 * Opens (or adopts) the database for a store in WAL mode, and checks the table name is a plain
 * identifier, since it is interpolated into SQL.
 */
export function openDatabase(
  target: SqliteTarget,
  defaultTable: string,
): { db: BetterSqlite3.Database; owned: boolean; table: string } {
  const table = target.table ?? defaultTable;
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table))
    throw new ConfigurationError('table', `"${table}" is not a plain SQL identifier`);
  if (typeof target.database !== 'string') return { db: target.database, owned: false, table };
  let Database: typeof BetterSqlite3;
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (cause) {
    throw new ConfigurationError(
      'database',
      `better-sqlite3 is not installed (npm install better-sqlite3@12): ${String(cause)}`,
    );
  }
  const db = new Database(target.database);
  db.pragma('journal_mode = WAL');
  return { db, owned: true, table };
}
