import pg from 'pg';

export const postgresUrl =
  process.env['REINS_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Connects to the test PostgreSQL, or fails saying how to get one (REINS_SKIP_POSTGRES=1 skips). */
export async function connectTestPostgres(): Promise<pg.Pool | undefined> {
  if (process.env['REINS_SKIP_POSTGRES'] === '1') return undefined;
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 8, connectionTimeoutMillis: 3_000 });
  try {
    await pool.query('SELECT 1');
    return pool;
  } catch (error) {
    await pool.end().catch(() => {});
    throw new Error(
      `PostgreSQL is not reachable at ${postgresUrl} (${error instanceof Error ? error.message : String(error)}). ` +
        'Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set REINS_SKIP_POSTGRES=1 to skip the PostgreSQL suites.',
    );
  }
}
