/** A fresh table name for a run store under test (PostgreSQL identifiers: letters, digits, `_`). */
export function uniqueTable(name: string): string {
  return `${name}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`.slice(0, 50);
}

/**
 * Drops a pg-boss queue a test made, jobs first (pg-boss 10's deleteQueue deletes the queue's row
 * before its jobs' partition, which the jobs' foreign key refuses). Each queue is a partition of
 * pg-boss's job table: left behind, they pile up over runs and slow every maintenance pass.
 */
export async function dropBossQueue(queue: {
  boss: {
    getDb(): { executeSql(text: string, values?: unknown[]): Promise<unknown> };
    deleteQueue(name: string): Promise<void>;
  };
  queueName: string;
}): Promise<void> {
  await queue.boss
    .getDb()
    .executeSql('DELETE FROM pgboss.job WHERE name = $1', [queue.queueName])
    .catch(() => {});
  await queue.boss.deleteQueue(queue.queueName).catch(() => {});
}
