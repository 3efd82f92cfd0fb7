import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import pc from 'picocolors';
import type { DeadLetterStore } from '../resilience/dead-letter.js';
import { printJson, sanitize } from './sanitize.js';

export interface DlqTarget {
  db?: string;
  redis?: string;
  key: string;
}

/** A field of a dead letter as printable text (the row is data from outside: it may lack the field). */
const text = (value: unknown) => sanitize(String(value ?? ''));

const when = (ms: unknown) =>
  typeof ms === 'number' && Number.isFinite(ms) && Math.abs(ms) <= 8.64e15
    ? new Date(ms).toISOString()
    : '(no time)'.padEnd(24);

/** A store that cannot be opened as named (a missing file, no such table): exit 2 with `message`. */
class UnusableStore extends Error {}

/**
 * Opens the store a `reins dlq` command names: a SQLite file, or a Redis URL and key. Every dlq
 * command works on an existing store, so a SQLite file must exist (`fileMustExist`: a typo in
 * `--db` must not leave an empty database behind) and hold the table.
 */
async function open(target: DlqTarget): Promise<{ store: DeadLetterStore; close: () => void }> {
  if (target.redis) {
    const { Redis } = await import('ioredis');
    const { RedisDeadLetterStore } = await import('../redis/redis-dead-letter-store.js');
    const redis = new Redis(target.redis, { maxRetriesPerRequest: 1 });
    return { store: new RedisDeadLetterStore({ redis, key: target.key }), close: () => redis.disconnect() };
  }
  if (!target.db) throw new UnusableStore('name a store: --db FILE (SQLite) or --redis URL');
  let Database: typeof BetterSqlite3;
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch {
    throw new UnusableStore('better-sqlite3 is not installed (npm install better-sqlite3@12)');
  }
  let db: BetterSqlite3.Database;
  try {
    db = new Database(target.db, { fileMustExist: true });
  } catch (cause) {
    throw new UnusableStore(
      `no SQLite dead-letter file at ${target.db} (${cause instanceof Error ? cause.message : String(cause)}); dlq commands open an existing store and never create one`,
    );
  }
  try {
    const table = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(target.key) as { name: string } | undefined;
    if (!table)
      throw new UnusableStore(`${target.db} has no dead-letter table "${target.key}" (check --key)`);
    const { SqliteDeadLetterStore } = await import('../sqlite/sqlite-dead-letter-store.js');
    const store = new SqliteDeadLetterStore({ database: db, table: target.key });
    return { store, close: () => db.close() };
  } catch (error) {
    db.close();
    if (error instanceof UnusableStore) throw error;
    throw new UnusableStore(
      `${target.db} is not a usable SQLite dead-letter file: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * `reins dlq list|show|retry|purge`. Dead letters hold untrusted text (a failing service's error
 * message, a payload from the queue), so everything printed from them is sanitized.
 */
export async function dlq(
  action: 'list' | 'show' | 'retry' | 'purge',
  id: string | undefined,
  target: DlqTarget,
  json: boolean,
): Promise<number> {
  let opened: Awaited<ReturnType<typeof open>>;
  try {
    opened = await open(target);
  } catch (error) {
    if (!(error instanceof UnusableStore)) throw error;
    console.error(`reins dlq ${action}: ${sanitize(error.message)}`);
    return 2;
  }
  const { store, close } = opened;
  try {
    switch (action) {
      case 'list': {
        const letters = await store.list();
        if (json) printJson(letters);
        else {
          console.log(pc.bold(`${letters.length} dead letter(s)`));
          for (const letter of letters) {
            console.log(
              `  ${text(letter.id).padEnd(16)} ${text(letter.classification).padEnd(10)} attempts ${text(letter.attempts).padStart(2)}  ${when(letter.lastFailedAtMs)}  ${text(letter.error?.message)}`,
            );
          }
        }
        return 0;
      }
      case 'show':
      case 'retry': {
        if (!id) throw new Error(`reins dlq ${action} needs an id`);
        const letter = action === 'show' ? await store.get(id) : await store.release(id);
        if (!letter) {
          console.error(`reins: no dead letter with id ${sanitize(id)}`);
          return 1;
        }
        // `retry` prints the released payload so it can be piped back onto the work queue.
        printJson(action === 'show' ? letter : letter.payload, json || action === 'retry' ? 0 : 2);
        return 0;
      }
      case 'purge': {
        const count = await store.purge();
        console.log(json ? JSON.stringify({ purged: count }) : `purged ${count} dead letter(s)`);
        return 0;
      }
    }
  } finally {
    close();
  }
}
