import { readFileSync } from 'node:fs';
import { MemoryCheckpointStore } from '../checkpoint/index.js';
import { importPeers } from '../errors/missing-peer.js';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
import { type AgentDefinition, agentRegistry } from '../queue/agent-definition.js';
import { InProcessRunQueue } from '../queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../queue/memory-run-registry.js';
import type { RunEventLog, RunQueue, RunRegistry } from '../queue/run-queue.js';
import { type Authenticate, parseTokenTable, staticTokens } from '../server/authenticate.js';
import { type LoopbackListener, listenOnLoopback } from '../server/listen.js';
import { recordedRuns } from '../server/recorded-runs.js';
import { createRunService } from '../server/run-service.js';
import { viewerDirectory } from '../server/viewer-directory.js';
import type { TraceEvent } from '../trace/events.js';
import { splitTrace } from '../trace/split-trace.js';
import { importModule } from './eval.js';
import { sanitize } from './sanitize.js';
import { unusableTrace } from './trace.js';

/** Flags of `reins serve`. */
export interface ServeFlags {
  /** Required with `inProcess`; with BullMQ, only to refuse unknown agent names at the door. */
  agents: string | undefined;
  /** Execute runs in this process (no Redis) instead of queueing them on BullMQ. */
  inProcess: boolean;
  host: string;
  port: number;
  tokens: string | undefined;
  redis: string;
  /** The job engine: BullMQ on Redis, or pg-boss on PostgreSQL (no Redis). @default 'bullmq' */
  engine?: 'bullmq' | 'pgboss';
  /** PostgreSQL URL for `engine: 'pgboss'`. */
  postgres?: string;
  /** The queue's name and (BullMQ) the key prefix: the workers' (`reins worker`) must match. */
  queue: string;
  prefix: string;
  /** Records and traces of ended runs expire this long after they end. @default kept */
  endedRunTtlMs?: number;
}

/** Waits for Ctrl-C (or SIGTERM), then closes what was opened. */
function untilStopped(close: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void close().then(() => resolve(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

async function listen(
  app: Parameters<typeof listenOnLoopback>[0],
  host: string,
  port: number,
  command: string,
) {
  try {
    return await listenOnLoopback(app, { hostname: host, port });
  } catch (error) {
    console.error(`${command}: ${sanitize(error instanceof Error ? error.message : String(error))}`);
    return undefined;
  }
}

/** Loads the agent definitions a module exports as `agents` (an array) or `default`. */
async function loadAgents(file: string): Promise<AgentDefinition[]> {
  const module = await importModule(file, 'agents');
  const agents = module['agents'] ?? module['default'];
  const list = Array.isArray(agents) ? agents : agents ? [agents] : [];
  if (list.length === 0)
    throw new TypeError(`${file} exports no agent definitions (export const agents = [...])`);
  return list as AgentDefinition[];
}

/** The token table: `--tokens FILE`, else `REINS_TOKENS` (`token=actor,token=actor`), else one made up now. */
function tokenTable(file: string | undefined): { authenticate: Authenticate; generated?: string } {
  if (file) return { authenticate: staticTokens(parseTokenTable(readFileSync(file, 'utf8'))) };
  const fromEnv = process.env['REINS_TOKENS'];
  if (fromEnv) {
    const lines = fromEnv
      .split(',')
      .map((pair) => pair.trim().replace('=', ' '))
      .join('\n');
    return { authenticate: staticTokens(parseTokenTable(lines)) };
  }
  const generated = `dev-${globalThis.crypto.randomUUID()}`;
  return { authenticate: staticTokens({ [generated]: 'dev' }), generated };
}

/** Connects once with a short timeout, so a missing Redis is a message, not a hang. */
async function redisReachable(url: string): Promise<string | undefined> {
  const { Redis } = await import('ioredis');
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    probe.disconnect();
  }
}

/** Connects once with a short timeout, so a missing PostgreSQL is a message, not a hang. */
async function postgresReachable(url: string): Promise<string | undefined> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The pg-boss queue on PostgreSQL, its records and traces. */
async function openPgBossQueue(
  flags: ServeFlags,
): Promise<{ queue: RunQueue; runs: RunRegistry; events: RunEventLog; note: string } | string> {
  let pgboss: typeof import('../pgboss/index.js');
  try {
    [pgboss] = await importPeers('reins serve --engine pgboss', [
      { name: 'pg-boss', range: '^10', load: () => import('../pgboss/index.js') },
      { name: 'pg', range: '^8', load: () => import('pg') },
    ]);
  } catch (error) {
    return `${error instanceof Error ? error.message : String(error)} (or serve with --in-process)`;
  }
  const url = flags.postgres ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const unreachable = await postgresReachable(url);
  if (unreachable)
    return `PostgreSQL is not reachable at ${url} (${unreachable}): start one, pass --postgres, or serve with --in-process`;
  if (flags.endedRunTtlMs)
    return '--ended-ttl-ms goes to the workers with --engine pgboss (reins worker --engine pgboss --ended-ttl-ms N): they sweep ended runs';
  const queue = new pgboss.PgBossRunQueue({ connectionString: url, queueName: flags.queue });
  return {
    queue,
    runs: queue.registry,
    events: queue.events,
    note:
      `runs are pg-boss jobs on ${url} (queue "${flags.queue}"); ` +
      `workers execute them: reins worker --engine pgboss --agents <module> --postgres ${url} --queue ${flags.queue}`,
  };
}

/** The queue and its stores: BullMQ on Redis, pg-boss on PostgreSQL, or the in-process queue. */
async function openQueue(
  flags: ServeFlags,
  agents: AgentDefinition[] | undefined,
): Promise<{ queue: RunQueue; runs: RunRegistry; events: RunEventLog; note: string } | string> {
  if (flags.inProcess) {
    if (!agents) return '--in-process needs --agents <module>: the runs execute here';
    const registry = new MemoryRunRegistry();
    const events = new MemoryRunEventLog();
    const queue = new InProcessRunQueue({
      agents: agentRegistry(agents),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    });
    return {
      queue,
      runs: registry,
      events,
      note: 'runs execute in this process (the in-process queue); nothing survives a restart',
    };
  }
  if (flags.engine === 'pgboss') return openPgBossQueue(flags);
  let bullmq: typeof import('../bullmq/index.js');
  try {
    [bullmq] = await importPeers('reins serve', [
      { name: 'bullmq', range: '^6', load: () => import('../bullmq/index.js') },
      { name: 'ioredis', range: '^5', load: () => import('ioredis') },
    ]);
  } catch (error) {
    return `${error instanceof Error ? error.message : String(error)} (or serve with --in-process)`;
  }
  const unreachable = await redisReachable(flags.redis);
  if (unreachable)
    return `Redis is not reachable at ${flags.redis} (${unreachable}): start one, pass --redis, or serve with --in-process`;
  const queue = new bullmq.BullmqRunQueue({
    redis: flags.redis,
    queueName: flags.queue,
    prefix: flags.prefix,
    ...(flags.endedRunTtlMs ? { endedRunTtlMs: flags.endedRunTtlMs } : {}),
  });
  return {
    queue,
    runs: queue.registry,
    events: queue.events,
    note:
      `runs are BullMQ jobs on ${flags.redis} (queue "${flags.queue}", prefix "${flags.prefix}"); ` +
      `workers execute them: reins worker --agents <module> --redis ${flags.redis} --queue ${flags.queue} --prefix ${flags.prefix}`,
  };
}

/**
 * `reins serve`: the run service and its viewer on loopback. Runs are BullMQ jobs on Redis (the
 * workers are `reins worker` processes), or, with `--in-process`, execute in this process.
 */
export async function serve(flags: ServeFlags): Promise<number> {
  let agents: AgentDefinition[] | undefined;
  let tokens: ReturnType<typeof tokenTable>;
  try {
    agents = flags.agents ? await loadAgents(flags.agents) : undefined;
    tokens = tokenTable(flags.tokens);
  } catch (error) {
    console.error(`reins serve: ${sanitize(error instanceof Error ? error.message : String(error))}`);
    return 2;
  }
  const opened = await openQueue(flags, agents);
  if (typeof opened === 'string') {
    console.error(`reins serve: ${sanitize(opened)}`);
    return 2;
  }
  const { queue, runs, events } = opened;
  const app = createRunService({
    queue,
    runs,
    events,
    authenticate: tokens.authenticate,
    ...(agents ? { agents: agents.map((agent) => agent.name) } : {}),
    viewer: viewerDirectory(),
  });
  const listener: LoopbackListener | undefined = await listen(app, flags.host, flags.port, 'reins serve');
  if (!listener) {
    await queue.close();
    return 2;
  }
  const names = agents ? ` (agents: ${agents.map((agent) => sanitize(agent.name)).join(', ')})` : '';
  console.log(`reins serve: ${listener.url}${names}`);
  console.log(`note: ${sanitize(opened.note)}`);
  if (tokens.generated) console.log(`token (actor "dev"): ${tokens.generated}`);
  return untilStopped(async () => {
    await listener.close();
    await queue.close();
  });
}

/** `reins trace view FILE`: the viewer over a recorded JSONL trace, read-only, on loopback. */
export async function traceView(file: string, flags: { host: string; port: number }): Promise<number> {
  let events: TraceEvent[];
  try {
    const read = readJsonlTrace(file);
    const problem = unusableTrace(read.events, read.truncatedTail);
    if (problem) {
      console.error(`reins trace view: ${sanitize(file)}: ${problem}`);
      return 2;
    }
    events = read.events as TraceEvent[];
  } catch (error) {
    console.error(`reins trace view: ${sanitize(error instanceof Error ? error.message : String(error))}`);
    return 2;
  }
  const viewer = { id: 'trace-viewer' };
  const app = createRunService({
    ...recordedRuns(events, viewer.id),
    authenticate: () => undefined,
    anonymousActor: viewer,
    readOnly: true,
    viewer: viewerDirectory(),
  });
  const listener = await listen(app, flags.host, flags.port, 'reins trace view');
  if (!listener) return 2;
  const runs = splitTrace(events).length;
  console.log(
    `reins trace view: ${listener.url} (${sanitize(file)}: ${runs} run${runs === 1 ? '' : 's'}, read-only)`,
  );
  return untilStopped(() => listener.close());
}
