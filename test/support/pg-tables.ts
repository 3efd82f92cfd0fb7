import { deleteBossQueue, type PgBoss } from '../../src/pgboss/pgboss-connection.js';

/** A fresh table name for a run store under test (PostgreSQL identifiers: letters, digits, `_`). */
export function uniqueTable(name: string): string {
  return `${name}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`.slice(0, 50);
}

/**
 * Drops a pg-boss queue a test made, and its jobs. Each queue is a partition of pg-boss's job table:
 * left behind, they pile up over runs and slow every maintenance pass.
 */
export async function dropBossQueue(queue: { boss: PgBoss; queueName: string }): Promise<void> {
  await deleteBossQueue(queue.boss, queue.queueName).catch(() => {});
}
