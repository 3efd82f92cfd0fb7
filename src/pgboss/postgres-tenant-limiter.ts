import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { Admission, TenantLimits } from '../queue/tenant-limits.js';
import { inTransaction, type RunTables } from './tables.js';

/**
 * Per-tenant concurrency and start rate in PostgreSQL, for pg-boss workers (pg-boss 10 has no
 * groups): `TenantLimiter`'s rules on tables instead of Redis. A worker asks before it runs a job
 * and, refused, queues the job again for later. A slot is a row whose lease the holder renews while
 * the run goes on, so a killed worker's slot lapses on its own; starts are counted in a fixed
 * window per tenant. One admission is one transaction holding the tenant's advisory lock, so two
 * workers admitting for one tenant at once are decided one after the other.
 */
export class PostgresTenantLimiter {
  readonly #pool: Pick<Pool, 'connect' | 'query'>;
  readonly #tables: RunTables;
  readonly #limits: TenantLimits;
  readonly #leaseMs: number;

  constructor(options: {
    pool: Pick<Pool, 'connect' | 'query'>;
    tables: RunTables;
    limits: TenantLimits;
    leaseMs: number;
  }) {
    this.#pool = options.pool;
    this.#tables = options.tables;
    this.#limits = options.limits;
    this.#leaseMs = options.leaseMs;
  }

  get active(): boolean {
    return this.#limits.maxRunning !== undefined || this.#limits.rate !== undefined;
  }

  /**
   * Whether `owner` (one execution of the run: the worker's job id and retry count) may start the
   * run now. A run that already holds a slot keeps it and the slot passes to `owner`: the execution
   * that took over a job whose lease lapsed. Tenants are kept as hashes (any length, any character).
   */
  async admit(tenantName: string, runId: string, now: number, owner = runId): Promise<Admission> {
    const { maxRunning, rate } = this.#limits;
    const { tenantRunning, tenantStarts, key } = this.#tables;
    const tenant = tenantKey(tenantName);
    return inTransaction(this.#pool, async (client): Promise<Admission> => {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `reins tenant ${key} ${tenant}`,
      ]);
      if (maxRunning !== undefined) {
        await client.query(`DELETE FROM ${tenantRunning} WHERE tenant = $1 AND lease_until <= $2`, [
          tenant,
          now,
        ]);
        const held = await client.query<{ n: number; mine: boolean }>(
          `SELECT count(*)::int AS n, coalesce(bool_or(run_id = $2), false) AS mine
             FROM ${tenantRunning} WHERE tenant = $1`,
          [tenant, runId],
        );
        const row = held.rows[0];
        if (row && !row.mine && row.n >= maxRunning)
          return { ok: false, reason: 'concurrency', retryInMs: 0 };
      }
      if (rate !== undefined) {
        const counted = await client.query<{ count: number; window_end: number }>(
          `INSERT INTO ${tenantStarts} AS s (tenant, window_end, count) VALUES ($1, $2::float8 + $3::float8, 1)
           ON CONFLICT (tenant) DO UPDATE SET
             count = CASE WHEN s.window_end <= $2 THEN 1 ELSE s.count + 1 END,
             window_end = CASE WHEN s.window_end <= $2 THEN $2::float8 + $3::float8 ELSE s.window_end END
           RETURNING count, window_end`,
          [tenant, now, rate.windowMs],
        );
        const row = counted.rows[0];
        if (row && row.count > rate.max)
          return { ok: false, reason: 'rate', retryInMs: Math.max(0, row.window_end - now) };
      }
      if (maxRunning !== undefined)
        await client.query(
          `INSERT INTO ${tenantRunning} (tenant, run_id, lease_until, owner) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant, run_id) DO UPDATE SET lease_until = excluded.lease_until, owner = excluded.owner`,
          [tenant, runId, now + this.#leaseMs, owner],
        );
      return { ok: true };
    });
  }

  /** Extends the run's slot while `owner` holds it; the worker calls it while the run goes on. */
  async renew(tenant: string, runId: string, now: number, owner = runId): Promise<void> {
    if (this.#limits.maxRunning === undefined) return;
    await this.#pool.query(
      `UPDATE ${this.#tables.tenantRunning} SET lease_until = $3
        WHERE tenant = $1 AND run_id = $2 AND owner IS NOT DISTINCT FROM $4`,
      [tenantKey(tenant), runId, now + this.#leaseMs, owner],
    );
  }

  /** Frees the run's slot if `owner` still holds it (an execution that lost its job to another does not). */
  async release(tenant: string, runId: string, owner = runId): Promise<void> {
    if (this.#limits.maxRunning === undefined) return;
    await this.#pool.query(
      `DELETE FROM ${this.#tables.tenantRunning}
        WHERE tenant = $1 AND run_id = $2 AND owner IS NOT DISTINCT FROM $3`,
      [tenantKey(tenant), runId, owner],
    );
  }
}

/** The tenant as stored: a hash, so a name of any length or character fits the tables' keys. */
function tenantKey(tenant: string): string {
  return createHash('sha256').update(tenant).digest('hex');
}
