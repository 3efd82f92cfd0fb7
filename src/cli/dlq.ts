import pc from 'picocolors';
import type { DeadLetterStore } from '../resilience/dead-letter.js';

export interface DlqTarget {
  db?: string;
  redis?: string;
  key: string;
}

/** Opens the store a `reins dlq` command names: a SQLite file, or a Redis URL and key. */
async function open(target: DlqTarget): Promise<{ store: DeadLetterStore; close: () => void }> {
  if (target.redis) {
    const { Redis } = await import('ioredis');
    const { RedisDeadLetterStore } = await import('../redis/redis-dead-letter-store.js');
    const redis = new Redis(target.redis, { maxRetriesPerRequest: 1 });
    return { store: new RedisDeadLetterStore({ redis, key: target.key }), close: () => redis.disconnect() };
  }
  if (!target.db) throw new Error('name a store: --db FILE (SQLite) or --redis URL');
  const { SqliteDeadLetterStore } = await import('../sqlite/sqlite-dead-letter-store.js');
  const store = new SqliteDeadLetterStore({ database: target.db, table: target.key });
  return { store, close: () => store.close() };
}

/** `reins dlq list|show|retry|purge`. */
export async function dlq(
  action: 'list' | 'show' | 'retry' | 'purge',
  id: string | undefined,
  target: DlqTarget,
  json: boolean,
): Promise<number> {
  const { store, close } = await open(target);
  try {
    switch (action) {
      case 'list': {
        const letters = await store.list();
        if (json) console.log(JSON.stringify(letters, null, 2));
        else {
          console.log(pc.bold(`${letters.length} dead letter(s)`));
          for (const letter of letters) {
            console.log(
              `  ${letter.id.padEnd(16)} ${letter.classification.padEnd(10)} attempts ${String(letter.attempts).padStart(2)}  ${new Date(letter.lastFailedAtMs).toISOString()}  ${letter.error.message}`,
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
          console.error(`reins: no dead letter with id ${id}`);
          return 1;
        }
        // `retry` prints the released payload so it can be piped back onto the work queue.
        console.log(
          JSON.stringify(
            action === 'show' ? letter : letter.payload,
            null,
            json || action === 'retry' ? 0 : 2,
          ),
        );
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
