import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CheckpointStore } from '../checkpoint/checkpoint-store.js';
import { importPeers } from '../errors/missing-peer.js';
import { ReinsError } from '../errors/reins-error.js';
import { type AgentDefinition, type AgentRegistry, agentRegistry } from '../queue/agent-definition.js';
import type { TenantLimits } from '../queue/tenant-limits.js';

/** What `reins worker` takes (flags, else env, else loopback). */
export interface WorkerCommandOptions {
  /** A module exporting `agents` (or a default export): a registry, an array of definitions, or a function returning one. */
  agents: string;
  /** @default 'bullmq' */
  engine?: 'bullmq' | 'pgboss';
  redis: string;
  postgres: string;
  checkpoint: 'postgres' | 'redis' | 'sqlite';
  sqlite?: string;
  queue: string;
  prefix: string;
  concurrency: number;
  /** PostgreSQL connections of a pg-boss worker. @default concurrency + 4 */
  poolSize?: number;
  tenantMaxRunning?: number;
  /** `<max>/<windowMs>` */
  tenantRate?: string;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  drainTimeoutMs?: number;
  /** Records, traces and (with `--checkpoint redis`) checkpoints of ended runs expire this long after they end. */
  endedTtlMs?: number;
  quiet?: boolean;
}

/** What an agents module's function is given: the same URLs the worker uses. */
export interface AgentModuleContext {
  redisUrl: string;
  postgresUrl: string;
}

type AgentsExport =
  | AgentRegistry
  | readonly AgentDefinition[]
  | ((
      context: AgentModuleContext,
    ) => AgentRegistry | readonly AgentDefinition[] | Promise<AgentRegistry | readonly AgentDefinition[]>);

/** Loads the agent definitions from a module path (relative to the working directory). */
export async function loadAgents(path: string, context: AgentModuleContext): Promise<AgentRegistry> {
  const module = (await import(pathToFileURL(resolve(path)).href)) as {
    agents?: AgentsExport;
    default?: AgentsExport;
  };
  let value = module.agents ?? module.default;
  if (typeof value === 'function') value = await value(context);
  if (Array.isArray(value)) return agentRegistry(value);
  if (value && typeof (value as AgentRegistry).get === 'function') return value as AgentRegistry;
  throw new ReinsError(
    'invalid_option',
    `${path} must export \`agents\` (or a default): an agentRegistry, an array of defineAgent() definitions, or a function returning one`,
  );
}

/**
 * `reins worker`: one BullMQ worker process. Runs until SIGTERM or SIGINT, then drains: each run
 * finishes its step, is checkpointed and goes back to the queue for another worker.
 */
export async function workerCommand(options: WorkerCommandOptions): Promise<number> {
  if (options.engine === 'pgboss') return pgBossWorkerCommand(options);
  const [bullmqModule, ioredis] = await importPeers('reins worker', [
    { name: 'bullmq', range: '^6', load: () => import('../bullmq/index.js') },
    { name: 'ioredis', range: '^5', load: () => import('ioredis') },
  ]);
  const context = { redisUrl: options.redis, postgresUrl: options.postgres };
  const agents = await loadAgents(options.agents, context);
  const redis = new ioredis.Redis(options.redis, { maxRetriesPerRequest: null });
  const { checkpoint, close: closeCheckpoint } = await openCheckpointStore(options, redis);
  const tenants = tenantLimits(options);
  const worker = await bullmqModule.createRunWorker({
    redis,
    queueName: options.queue,
    prefix: options.prefix,
    agents,
    checkpoint,
    concurrency: options.concurrency,
    ...(options.endedTtlMs ? { endedRunTtlMs: options.endedTtlMs } : {}),
    ...(tenants ? { tenants } : {}),
    ...(options.lockDurationMs !== undefined ? { lockDurationMs: options.lockDurationMs } : {}),
    ...(options.stalledIntervalMs !== undefined ? { stalledIntervalMs: options.stalledIntervalMs } : {}),
    ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}),
  });
  if (!options.quiet)
    console.error(
      `reins worker ${process.pid}: queue ${options.queue} (prefix ${options.prefix}), agents ${agents.names().join(', ')}, checkpoints in ${options.checkpoint}, concurrency ${options.concurrency}`,
    );
  await readyUntilStopped(options.quiet);
  await worker.close();
  await closeCheckpoint();
  await redis.quit().catch(() => {});
  // The agents module may hold connections of its own: the runs are drained, so leave regardless.
  setTimeout(() => process.exit(0), 1_000).unref();
  return 0;
}

/** `reins worker --engine pgboss`: the same, on pg-boss and PostgreSQL (no Redis unless `--checkpoint redis`). */
async function pgBossWorkerCommand(options: WorkerCommandOptions): Promise<number> {
  const unsupported = [
    options.lockDurationMs !== undefined ? '--lock-duration-ms' : undefined,
    options.stalledIntervalMs !== undefined ? '--stalled-interval-ms' : undefined,
  ].filter((flag) => flag !== undefined);
  if (unsupported.length > 0)
    throw new ReinsError('invalid_option', `${unsupported.join(', ')}: not supported with --engine pgboss`);
  const [pgboss, pg] = await importPeers('reins worker --engine pgboss', [
    { name: 'pg-boss', range: '^10', load: () => import('../pgboss/index.js') },
    { name: 'pg', range: '^8', load: () => import('pg') },
  ]);
  const context = { redisUrl: options.redis, postgresUrl: options.postgres };
  const agents = await loadAgents(options.agents, context);
  const tenants = tenantLimits(options);
  const pool = new pg.default.Pool({
    connectionString: options.postgres,
    max: options.poolSize ?? options.concurrency + 4,
  });
  // An idle connection the server closes would otherwise end the process.
  pool.on('error', () => {});
  let redis: import('ioredis').Redis | undefined;
  if (options.checkpoint === 'redis') {
    const { Redis } = await import('ioredis');
    redis = new Redis(options.redis, { maxRetriesPerRequest: null });
  }
  const { checkpoint, close: closeCheckpoint } =
    options.checkpoint === 'postgres'
      ? {
          checkpoint: new (await import('../postgres/postgres-checkpoint-store.js')).PostgresCheckpointStore({
            pool,
          }),
          close: async () => {},
        }
      : await openCheckpointStore(options, redis as import('ioredis').Redis);
  const worker = await pgboss.createPgBossWorker({
    connectionString: options.postgres,
    pool,
    queueName: options.queue,
    agents,
    checkpoint,
    concurrency: options.concurrency,
    ...(tenants ? { tenants } : {}),
    ...(options.endedTtlMs ? { endedRunTtlMs: options.endedTtlMs } : {}),
    ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}),
  });
  if (!options.quiet)
    console.error(
      `reins worker ${process.pid}: pg-boss queue ${options.queue} on ${options.postgres}, agents ${agents.names().join(', ')}, checkpoints in ${options.checkpoint}, concurrency ${options.concurrency}`,
    );
  await readyUntilStopped(options.quiet);
  await worker.close();
  await closeCheckpoint();
  await pool.end().catch(() => {});
  await redis?.quit().catch(() => {});
  setTimeout(() => process.exit(0), 1_000).unref();
  return 0;
}

/** Says the worker is ready (tests and supervisors wait for it), then waits for SIGTERM or SIGINT. */
function readyUntilStopped(quiet: boolean | undefined): Promise<void> {
  return new Promise<void>((done) => {
    const stop = () => done();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.send?.({ ready: true });
    if (!quiet) console.error('ready');
  });
}

/** The per-tenant limits the flags ask for, if any. */
function tenantLimits(options: WorkerCommandOptions): TenantLimits | undefined {
  const rate = parseRate(options.tenantRate);
  if (options.tenantMaxRunning === undefined && !rate) return undefined;
  return {
    ...(options.tenantMaxRunning !== undefined ? { maxRunning: options.tenantMaxRunning } : {}),
    ...(rate ? { rate } : {}),
  };
}

function parseRate(text: string | undefined): { max: number; windowMs: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new ReinsError('invalid_option', `--tenant-rate must be <max>/<windowMs>, got ${text}`);
  return { max: Number(match[1]), windowMs: Number(match[2]) };
}

async function openCheckpointStore(
  options: WorkerCommandOptions,
  redis: import('ioredis').Redis,
): Promise<{ checkpoint: CheckpointStore; close: () => Promise<void> }> {
  switch (options.checkpoint) {
    case 'redis': {
      const { RedisCheckpointStore } = await import('../redis/redis-checkpoint-store.js');
      return {
        checkpoint: new RedisCheckpointStore({
          redis,
          keyPrefix: `${options.prefix}:checkpoint`,
          ...(options.endedTtlMs ? { endedRunTtlMs: options.endedTtlMs } : {}),
        }),
        close: async () => {},
      };
    }
    case 'postgres': {
      const [pg] = await importPeers('reins worker --checkpoint postgres', [
        { name: 'pg', range: '^8', load: () => import('pg') },
      ]);
      const { PostgresCheckpointStore } = await import('../postgres/postgres-checkpoint-store.js');
      const pool = new pg.default.Pool({ connectionString: options.postgres, max: 4 });
      return { checkpoint: new PostgresCheckpointStore({ pool }), close: () => pool.end() };
    }
    case 'sqlite': {
      const { SqliteCheckpointStore } = await import('../sqlite/sqlite-checkpoint-store.js');
      const store = new SqliteCheckpointStore({ database: options.sqlite ?? 'reins-checkpoints.db' });
      return { checkpoint: store, close: async () => store.close() };
    }
  }
}
