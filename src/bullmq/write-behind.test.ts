import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, redisUrl, uniquePrefix } from '../../test/support/redis.js';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { RunState } from '../loop/run-state.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { executeRun } from '../queue/execute-run.js';
import { queuedRecord } from '../queue/run-stores.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import { RedisCheckpointStore } from '../redis/redis-checkpoint-store.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

interface Sent {
  kind: 'append' | 'commit' | 'other';
  /** For a commit: the last append sent before it was still waiting for its reply. */
  appendPending?: boolean;
  settled: boolean;
}

/** Records every command the client sends, in order, and whether each had its reply yet. */
function recordCommands(client: Redis): Sent[] {
  const sent: Sent[] = [];
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((command: { args: unknown[]; promise: Promise<unknown> }, ...rest: unknown[]) => {
    const keys = command.args.map(String);
    const kind = keys.some((key) => key.includes(':events:'))
      ? 'append'
      : keys.some((key) => key.includes(':checkpoint:{'))
        ? 'commit'
        : 'other';
    const entry: Sent = { kind, settled: false };
    if (kind === 'commit') {
      const append = sent.findLast((command) => command.kind === 'append');
      entry.appendPending = append !== undefined && !append.settled;
    }
    const settle = () => {
      entry.settled = true;
    };
    command.promise.then(settle, settle);
    sent.push(entry);
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof client.sendCommand;
  return sent;
}

async function stores(client: Redis) {
  const prefix = uniquePrefix('write-behind');
  const registry = new RedisRunRegistry({ redis: client, prefix });
  const events = new RedisRunEventLog({ redis: client, prefix });
  const checkpoint = new RedisCheckpointStore({ redis: client, keyPrefix: `${prefix}:checkpoint` });
  return { prefix, registry, events, checkpoint };
}

describe('a step’s events and checkpoint sent back to back over one Redis connection', () => {
  it('the log is ordered before a checkpoint store on its own client, and only then', async ({ skip }) => {
    if (!redis) return skip();
    const other = new Redis(redisUrl, { lazyConnect: true });
    try {
      const { events } = await stores(redis);
      expect(events.orderedBefore(new RedisCheckpointStore({ redis }))).toBe(true);
      expect(events.orderedBefore(new RedisCheckpointStore({ redis: other }))).toBe(false);
      expect(events.orderedBefore(new MemoryCheckpointStore())).toBe(false);
      // A Cluster client spreads keys over connections: no order between them.
      const cluster = Object.assign(Object.create(redis) as Redis, { isCluster: true });
      const clusterLog = new RedisRunEventLog({ redis: cluster });
      expect(clusterLog.orderedBefore(new RedisCheckpointStore({ redis: cluster }))).toBe(false);
    } finally {
      other.disconnect();
    }
  });

  it('each step sends its append, then its commit before the append’s reply; the log and checkpoint agree', {
    timeout: 20_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    try {
      const { registry, events, checkpoint } = await stores(client);
      const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
      await registry.create(queuedRecord('wb-1', request, Date.now()), request);
      const sent = recordCommands(client);
      const result = await executeRun(
        { runId: 'wb-1', request },
        {
          agents: agentRegistry([scriptedStepsAgent({ steps: 6, effect: () => {} })]),
          checkpoint,
          registry,
          events,
        },
      );
      expect(result.kind === 'ended' && result.outcome.kind).toBe('answered');
      // Every commit that follows an append was sent while that append still waited for its reply:
      // the pair costs one round trip, and Redis applies them in the order sent.
      const pipelined = sent.filter((command) => command.kind === 'commit' && command.appendPending);
      // The five steps that end with a tool call (the claim commit and the final one follow no pending append).
      expect(pipelined.length).toBeGreaterThanOrEqual(5);
      const trace = await events.read('wb-1', -1);
      expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
      const state = await checkpoint.load('wb-1');
      expect(state?.trace?.nextSeq).toBe(trace.length);
      // Six model calls: five steps end with a tool call, the sixth answers.
      expect(trace.filter((event) => event.type === 'step-end')).toHaveLength(5);
    } finally {
      client.disconnect();
    }
  });

  it('a Redis that lost its scripts mid-run (SCRIPT FLUSH) still applies every step’s events before its checkpoint', {
    timeout: 20_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    const admin = redis.duplicate();
    const monitor = await redis.duplicate().monitor();
    // What Redis executed, in order (MONITOR lists the commands a script runs as it runs them).
    const executed: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => executed.push(args));
    try {
      const { prefix, registry, events, checkpoint } = await stores(client);
      const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
      await registry.create(queuedRecord('wb-flush', request, Date.now()), request);
      // Another process commits (so the commit script is cached again) right after the flush: the
      // worst case, where a commit would pass an append that waits for its script.
      const otherCheckpoint = new RedisCheckpointStore({ redis: admin, keyPrefix: `${prefix}:other` });
      const agents = agentRegistry([
        scriptedStepsAgent({
          steps: 6,
          effect: async ({ step }) => {
            await admin.script('FLUSH');
            await otherCheckpoint.save({
              ...((await checkpoint.load('wb-flush')) as RunState),
              runId: `other-${step}`,
            });
          },
        }),
      ]);
      const result = await executeRun(
        { runId: 'wb-flush', request },
        { agents, checkpoint, registry, events },
      );
      expect(result.kind === 'ended' && result.outcome.kind).toBe('answered');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const logKey = `${prefix}:checkpoint:{wb-flush}:log`;
      const stream = `${prefix}:events:wb-flush`;
      let stepEndsLogged = 0;
      let checkedCommits = 0;
      for (const args of executed) {
        const [command, key, id, , body] = args;
        if (command?.toUpperCase() === 'XADD' && key === stream && /"type":"(step|run)-end"/.test(body ?? ''))
          stepEndsLogged++;
        if (command?.toUpperCase() === 'RPUSH' && key === logKey && id?.startsWith('d')) {
          const step = Number(/"step":(\d+)/.exec(id)?.[1]);
          expect(
            stepEndsLogged,
            `checkpoint of step ${step} applied before its events`,
          ).toBeGreaterThanOrEqual(step);
          checkedCommits++;
        }
      }
      expect(checkedCommits).toBeGreaterThanOrEqual(5);
      const trace = await events.read('wb-flush', -1);
      expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
      expect((await checkpoint.load('wb-flush'))?.trace?.nextSeq).toBe(trace.length);
    } finally {
      monitor.disconnect();
      client.disconnect();
      admin.disconnect();
    }
  });
});
