/** `reins/postgres`: PostgreSQL stores (pg is an optional peer). */
export * from './postgres-checkpoint-store.js';
export * from './postgres-idempotency-store.js';
