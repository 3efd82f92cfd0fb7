export { PostgresListener } from './listener.js';
export { deleteBossQueue, type PgBossConnectionOptions } from './pgboss-connection.js';
export { PgBossRunQueue, type PgBossRunQueueOptions } from './pgboss-run-queue.js';
export { createPgBossWorker, type PgBossWorker, type PgBossWorkerOptions } from './pgboss-run-worker.js';
export { PostgresRunEventLog, type PostgresRunEventLogOptions } from './postgres-run-event-log.js';
export { PostgresRunRegistry, type PostgresRunRegistryOptions } from './postgres-run-registry.js';
export { PostgresTenantLimiter } from './postgres-tenant-limiter.js';
