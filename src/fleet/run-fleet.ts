import { spawn } from 'node:child_process';
import type { Redis } from 'ioredis';
import { importPeers } from '../errors/missing-peer.js';
import { RedisCircuitBreaker } from '../redis/redis-circuit-breaker.js';
import { RedisDeadLetterStore } from '../redis/redis-dead-letter-store.js';
import { RedisRetryBudget } from '../redis/redis-retry-budget.js';
import { budgetViolations, type RetryBudgetOptions } from '../resilience/retry-budget.js';
import { seededRandom } from '../testing/seeded-random.js';
import { peakRetries, type ServiceHit, startEnrichmentService } from './enrichment-service.js';
import type { WorkerConfig } from './worker-config.js';

/** What one setup did, counted at the service and in Redis. */
export interface FleetFigures {
  attemptsPerPoisonedItem: number;
  totalAttempts: number;
  enriched: number;
  deadLettered: number;
  wallMs: number;
  peakRetriesPer100ms: number;
  budgetViolations: number;
  breakerOpens: number;
  breakerReopens: number;
}

export interface FleetReport {
  records: number;
  poisoned: number;
  workers: number;
  naive: FleetFigures;
  reins: FleetFigures;
  outage: { outageMs: number; exponential: FleetFigures; decorrelated: FleetFigures; reins: FleetFigures };
}

export interface FleetOptions {
  redisUrl?: string;
  records?: number;
  poisoned?: number;
  workers?: number;
  /** Items each worker handles at once. @default 4 */
  concurrency?: number;
  outageMs?: number;
  /** The compiled worker script. */
  workerScript: string;
  seed?: number;
  onProgress?: (message: string) => void;
}

const budgetOptions: Pick<RetryBudgetOptions, 'ratio' | 'minPerSecond' | 'capacity'> = {
  ratio: 0.1,
  minPerSecond: 1,
  capacity: 20,
};

/**
 * Replays the postmortem for real, on loopback: an enrichment service, a shared Redis queue and
 * N worker processes, once with every error retried at three layers and once with reins; then an
 * outage (503 for everything, then recovery) with plain exponential backoff, decorrelated jitter,
 * and reins' full stack.
 */
export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const redisUrl = options.redisUrl ?? 'redis://127.0.0.1:6379';
  const records = options.records ?? 550;
  const poisoned = options.poisoned ?? 220;
  const workers = options.workers ?? 12;
  const outageMs = options.outageMs ?? 10_000;
  const progress = options.onProgress ?? (() => {});
  const [ioredis] = await importPeers('reins bench fleet', [
    { name: 'ioredis', range: '^5', load: () => import('ioredis') },
  ]);
  const redis = new ioredis.Redis(redisUrl, { maxRetriesPerRequest: 2 });
  try {
    const ids = Array.from({ length: records }, (_, i) => `r-${String(i).padStart(4, '0')}`);
    const random = seededRandom(options.seed ?? 550);
    const shuffled = [...ids].sort(() => random() - 0.5);
    const poisonedIds = new Set(shuffled.slice(0, poisoned));

    const base: Omit<WorkerConfig, 'prefix' | 'serviceUrl' | 'seed' | 'mode'> = {
      redisUrl,
      concurrency: options.concurrency ?? 4,
      naive: { toolRetries: 5, agentRetries: 5, jobRetries: 3, baseMs: 1 },
      reins: {
        maxAttempts: 3,
        maxTotalAttempts: 8,
        backoff: 'decorrelated',
        baseMs: 50,
        capMs: 2_000,
        breaker: true,
        breakerThreshold: 10,
        cooldownMs: 1_000,
        budget: true,
        budgetOptions,
      },
    };
    const run = async (
      name: string,
      mode: 'naive' | 'reins',
      reins: Partial<WorkerConfig['reins']>,
      outage: boolean,
    ): Promise<FleetFigures> => {
      progress(`fleet: ${name}`);
      const prefix = `reins-fleet:${name}:${process.pid}:${Date.now()}`;
      const outageWindow = { outageUntilMs: Number.POSITIVE_INFINITY };
      const service = await startEnrichmentService(outage ? outageWindow : {});
      const pipeline = redis.pipeline();
      for (const id of ids) {
        const healthy = outage || !poisonedIds.has(id);
        pipeline.hset(
          `${prefix}:records`,
          id,
          JSON.stringify(
            healthy ? { id, name: `customer ${id}`, region: 'eu-west' } : { id, name: `customer ${id}` },
          ),
        );
        pipeline.rpush(`${prefix}:queue`, JSON.stringify({ id, jobAttempt: 1, httpAttempts: 0 }));
      }
      pipeline.set(`${prefix}:busy`, 0);
      await pipeline.exec();
      const children = Array.from({ length: workers }, (_, index) => {
        const config: WorkerConfig = {
          ...base,
          mode,
          prefix,
          serviceUrl: service.url,
          seed: 1_000 + index,
          reins: { ...base.reins, ...reins },
        };
        return new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, [options.workerScript, JSON.stringify(config)], {
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr?.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
          });
          child.on('error', reject);
          child.on('exit', (code) =>
            code === 0 ? resolve() : reject(new Error(`fleet worker exited ${code}: ${stderr}`)),
          );
        });
      });
      // Every worker process is up before the clock starts, so they begin (and fail) together.
      while (Number(await redis.get(`${prefix}:ready`)) < workers)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const startAtMs = Date.now() + 100;
      outageWindow.outageUntilMs = startAtMs + outageMs;
      await redis.set(`${prefix}:start`, startAtMs);
      await Promise.all(children);
      const wallMs = Date.now() - startAtMs;
      await service.close();
      const figures = await measure(
        redis,
        prefix,
        service.hits,
        outage ? new Set() : poisonedIds,
        wallMs,
        mode === 'reins' && (reins.budget ?? base.reins.budget),
      );
      await cleanup(redis, prefix);
      return figures;
    };

    const naive = await run('naive', 'naive', {}, false);
    const reins = await run('reins', 'reins', {}, false);
    const noControls = {
      breaker: false,
      budget: false,
      maxAttempts: 5,
      maxTotalAttempts: 5,
      baseMs: 1_000,
      capMs: 8_000,
    };
    const exponential = await run(
      'outage-exponential',
      'reins',
      { ...noControls, backoff: 'exponential' },
      true,
    );
    const decorrelated = await run(
      'outage-decorrelated',
      'reins',
      { ...noControls, backoff: 'decorrelated' },
      true,
    );
    const reinsOutage = await run('outage-reins', 'reins', { maxAttempts: 4 }, true);
    return {
      records,
      poisoned,
      workers,
      naive,
      reins,
      outage: { outageMs, exponential, decorrelated, reins: reinsOutage },
    };
  } finally {
    redis.disconnect();
  }
}

async function measure(
  redis: Redis,
  prefix: string,
  hits: readonly ServiceHit[],
  poisonedIds: ReadonlySet<string>,
  wallMs: number,
  budgeted: boolean,
): Promise<FleetFigures> {
  const poisonedHits = hits.filter((hit) => poisonedIds.has(hit.record)).length;
  const breaker = await new RedisCircuitBreaker({ redis, key: `${prefix}:breaker` }).status();
  let violations = 0;
  if (budgeted) {
    const stats = await new RedisRetryBudget({ redis, key: `${prefix}:budget`, ...budgetOptions }).stats();
    violations = budgetViolations(stats, budgetOptions, Date.now());
  }
  return {
    attemptsPerPoisonedItem: poisonedIds.size === 0 ? 0 : poisonedHits / poisonedIds.size,
    totalAttempts: hits.length,
    enriched: await redis.scard(`${prefix}:enriched`),
    deadLettered: await new RedisDeadLetterStore({ redis, key: `${prefix}:dlq` }).count(),
    wallMs,
    peakRetriesPer100ms: peakRetries(hits),
    budgetViolations: violations,
    breakerOpens: breaker.opens,
    breakerReopens: breaker.reopens,
  };
}

async function cleanup(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
}
