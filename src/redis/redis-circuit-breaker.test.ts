import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { RedisCircuitBreaker, type RedisCircuitBreakerOptions } from './redis-circuit-breaker.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());
afterEach(() => {
  vi.restoreAllMocks();
});

/** A TCP proxy in front of the test Redis that can be taken down and brought back on the same port. */
function redisProxy() {
  const target = new URL(redisUrl);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  return {
    get port() {
      return port;
    },
    start: () =>
      new Promise<void>((resolve, reject) => {
        server = net.createServer((client) => {
          const upstream = net.connect(Number(target.port || 6379), target.hostname);
          const close = () => {
            client.destroy();
            upstream.destroy();
          };
          for (const socket of [client, upstream]) {
            sockets.add(socket);
            socket.on('error', close);
            socket.on('close', () => {
              sockets.delete(socket);
              close();
            });
          }
          client.pipe(upstream);
          upstream.pipe(client);
        });
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          port = (server!.address() as net.AddressInfo).port;
          resolve();
        });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        server?.close(() => resolve());
      }),
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('RedisCircuitBreaker returns to the shared state when Redis answers again', () => {
  it('degrades to local when Redis goes away, rechecks after the interval, and goes back to shared', async ({
    skip,
  }) => {
    if (redis === undefined) return skip();
    const proxy = redisProxy();
    await proxy.start();
    const client = new Redis({
      host: '127.0.0.1',
      port: proxy.port,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 20,
    });
    client.on('error', () => {});
    await client.connect();
    try {
      const clock = fakeClock();
      const key = uniquePrefix('recover');
      const settings = {
        key,
        clock,
        strategy: { type: 'consecutive', threshold: 2 },
        cooldownMs: 60_000,
        commandTimeoutMs: 200,
        recheckIntervalMs: 5_000,
      } satisfies Omit<RedisCircuitBreakerOptions, 'redis'>;
      const warnings: string[] = [];
      const a = new RedisCircuitBreaker({
        ...settings,
        redis: client,
        onWarning: (message) => warnings.push(message),
      });
      const b = new RedisCircuitBreaker({ ...settings, redis, onWarning: () => {} });
      expect(await a.acquire()).toEqual({ kind: 'allowed', probe: false });
      expect(a.degraded).toBe(false);

      // Redis goes away for this process: a local breaker, one warning.
      await proxy.stop();
      await until(() => client.status !== 'ready', 'the client to notice');
      expect(await a.acquire()).toMatchObject({ kind: 'allowed' });
      expect(a.degraded).toBe(true);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/using a local breaker/);

      // Meanwhile the rest of the fleet opens the shared circuit.
      for (let i = 0; i < 2; i++) await b.record(await b.acquire(), false);
      expect(await b.status()).toMatchObject({ status: 'open', opens: 1 });

      // A recheck while Redis is still down stays local, without another warning.
      clock.advance(5_000);
      expect(await a.acquire()).toMatchObject({ kind: 'allowed' });
      expect(a.degraded).toBe(true);
      expect(warnings).toHaveLength(1);

      // Redis is back; before the interval the breaker is still local.
      await proxy.start();
      await until(() => client.status === 'ready', 'the client to reconnect');
      const local = await a.acquire();
      expect(local).toMatchObject({ kind: 'allowed' });
      expect(a.degraded).toBe(true);

      // After the interval the next call asks Redis, and sees the fleet's open circuit.
      clock.advance(5_000);
      expect(await a.acquire()).toMatchObject({ kind: 'open' });
      expect(a.degraded).toBe(false);
      expect(warnings).toHaveLength(2);
      expect(warnings[1]).toMatch(/shared/);

      // A permit the local breaker gave is reported to the local breaker, not to the shared state.
      const evals = vi.spyOn(client, 'eval');
      await a.record(local, true);
      expect(evals).not.toHaveBeenCalled();
      expect(await a.status()).toMatchObject({ status: 'open', opens: 1 });
      expect((await a.acquire()).kind).toBe('open');
    } finally {
      client.disconnect();
      await proxy.stop();
    }
  });

  it('by default a backward step of the wall clock does not keep the shared circuit open past its cooldown', async ({
    skip,
  }) => {
    if (redis === undefined) return skip();
    const breaker = new RedisCircuitBreaker({
      redis,
      key: uniquePrefix('monotonic'),
      strategy: { type: 'consecutive', threshold: 1 },
      cooldownMs: 30,
      probeLeaseMs: 1_000,
    });
    await breaker.record(await breaker.acquire(), false);
    expect((await breaker.acquire()).kind).toBe('open');
    const stepped = Date.now() - 3_600_000;
    vi.spyOn(Date, 'now').mockImplementation(() => stepped);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await breaker.acquire()).toEqual({ kind: 'allowed', probe: true });
  });
});

describe('RedisCircuitBreaker options are validated', () => {
  const fake = {} as Redis;
  const bad = [Number.NaN, -1, Number.POSITIVE_INFINITY];
  const expectOption = (options: Partial<RedisCircuitBreakerOptions>, option: string) => {
    let caught: unknown;
    try {
      new RedisCircuitBreaker({ redis: fake, key: 'k', ...options });
    } catch (error) {
      caught = error;
    }
    expect(caught, `${option} ${JSON.stringify(options)}`).toBeInstanceOf(ConfigurationError);
    expect((caught as ConfigurationError).option).toBe(option);
  };

  it('names the option at fault', () => {
    for (const value of bad) {
      expectOption({ cooldownMs: value }, 'cooldownMs');
      expectOption({ probeLeaseMs: value }, 'probeLeaseMs');
      expectOption({ commandTimeoutMs: value }, 'commandTimeoutMs');
      expectOption({ recheckIntervalMs: value }, 'recheckIntervalMs');
      expectOption({ strategy: { type: 'consecutive', threshold: value } }, 'strategy.threshold');
      expectOption(
        { strategy: { type: 'rate', threshold: value, windowMs: 1_000, minimumCalls: 5 } },
        'strategy.threshold',
      );
      expectOption(
        { strategy: { type: 'rate', threshold: 0.5, windowMs: value, minimumCalls: 5 } },
        'strategy.windowMs',
      );
      expectOption(
        { strategy: { type: 'rate', threshold: 0.5, windowMs: 1_000, minimumCalls: value } },
        'strategy.minimumCalls',
      );
    }
    expectOption({ probeLeaseMs: 0 }, 'probeLeaseMs');
    expectOption({ probeLeaseMs: 1.5 }, 'probeLeaseMs');
    expectOption({ commandTimeoutMs: 0 }, 'commandTimeoutMs');
    expectOption({ strategy: { type: 'consecutive', threshold: 0 } }, 'strategy.threshold');
    expectOption(
      { strategy: { type: 'rate', threshold: 1.5, windowMs: 1, minimumCalls: 1 } },
      'strategy.threshold',
    );
    expectOption({ strategy: { type: 'other' } as never }, 'strategy.type');
    expectOption({ key: '' }, 'key');
    expect(() => new RedisCircuitBreaker({ redis: fake, key: 'k', cooldownMs: 0 })).not.toThrow();
  });
});
