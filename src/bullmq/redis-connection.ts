import { Redis } from 'ioredis';

/** A Redis URL, or a client (BullMQ needs `maxRetriesPerRequest: null` on it). */
export type RedisConnection = string | Redis;

/** The loopback Redis, unless `REINS_REDIS_URL` or a flag says otherwise. */
export const defaultRedisUrl = 'redis://127.0.0.1:6379';

/** A client for `connection`: made here (and owned: closed with its user) from a URL. */
export function redisConnection(connection: RedisConnection | undefined): { redis: Redis; owned: boolean } {
  if (connection !== undefined && typeof connection !== 'string') return { redis: connection, owned: false };
  return { redis: new Redis(connection ?? defaultRedisUrl, { maxRetriesPerRequest: null }), owned: true };
}
