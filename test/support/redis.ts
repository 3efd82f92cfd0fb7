import { Redis } from 'ioredis';

/** The Redis the tests use; CI and the dev machines run one on loopback. */
export const redisUrl = process.env['REINS_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/**
 * Connects to the test Redis, or fails with a message saying how to get one. Set
 * REINS_SKIP_REDIS=1 to skip Redis suites on a machine without it (never in CI).
 */
export async function connectTestRedis(): Promise<Redis | undefined> {
  if (process.env['REINS_SKIP_REDIS'] === '1') return undefined;
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch (error) {
    redis.disconnect();
    throw new Error(
      `Redis is not reachable at ${redisUrl} (${error instanceof Error ? error.message : String(error)}). ` +
        "Start one (redis-server --daemonize yes --save '' --appendonly no) or set REINS_SKIP_REDIS=1 to skip the Redis suites.",
    );
  }
}

/** A key prefix no other test run shares. */
export function uniquePrefix(name: string): string {
  return `reins-test:${name}:${process.pid}:${Math.random().toString(36).slice(2)}`;
}
