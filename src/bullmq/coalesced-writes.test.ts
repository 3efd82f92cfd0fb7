import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestRedis, uniquePrefix } from '../../test/support/redis.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { executeRun } from '../queue/execute-run.js';
import { queuedRecord } from '../queue/run-stores.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';
import { coalesceWrites } from '../redis/coalesce-writes.js';
import { RedisCheckpointStore } from '../redis/redis-checkpoint-store.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

interface Socketish {
  writableCorked: number;
  _write(chunk: unknown, encoding: string, callback: () => void): void;
  _writev?(chunks: { chunk: unknown }[], callback: () => void): void;
}

/** Records each write that reaches the socket (what a syscall sends), as the commands' text. */
function physicalWrites(client: Redis): string[][] {
  const writes: string[][] = [];
  const socket = (client as unknown as { stream: Socketish }).stream;
  const write = socket._write.bind(socket);
  socket._write = (chunk, encoding, callback) => {
    writes.push([String(chunk)]);
    write(chunk, encoding, callback);
  };
  const writev = socket._writev?.bind(socket);
  if (writev)
    socket._writev = (chunks, callback) => {
      writes.push(chunks.map(({ chunk }) => String(chunk)));
      writev(chunks, callback);
    };
  return writes;
}

const turn = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe('writes sent in one turn over a Redis connection go out together', () => {
  it('corks a ready connection until the turn ends, once however often it is asked', async ({ skip }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    try {
      await client.ping();
      const socket = (client as unknown as { stream: Socketish }).stream;
      const writes = physicalWrites(client);
      coalesceWrites(client);
      coalesceWrites(client);
      expect(socket.writableCorked).toBe(1);
      const replies = Promise.all([client.echo('a'), client.echo('b'), client.echo('c')]);
      expect(writes).toHaveLength(0);
      await turn();
      expect(socket.writableCorked).toBe(0);
      expect(await replies).toEqual(['a', 'b', 'c']);
      // Three commands, one write, in the order sent.
      expect(writes).toHaveLength(1);
      expect(writes[0]?.join('')).toMatch(/a[\s\S]*b[\s\S]*c/);
      // Without it, each command is its own write.
      writes.length = 0;
      await Promise.all([client.echo('d'), client.echo('e')]);
      expect(writes).toHaveLength(2);
    } finally {
      client.disconnect();
    }
  });

  it('leaves alone a client that is not connected, and a Cluster', async ({ skip }) => {
    if (!redis) return skip();
    const lazy = redis.duplicate({ lazyConnect: true });
    try {
      expect(() => coalesceWrites(lazy)).not.toThrow();
      expect((lazy as unknown as { stream?: unknown }).stream).toBeUndefined();
      await lazy.connect();
      const cluster = Object.assign(Object.create(lazy) as Redis, { isCluster: true });
      coalesceWrites(cluster);
      expect((lazy as unknown as { stream: Socketish }).stream.writableCorked).toBe(0);
      expect(await lazy.echo('still here')).toBe('still here');
    } finally {
      lazy.disconnect();
    }
  });

  it('a connection closed while corked fails the commands held, and the next connection is not corked', async ({
    skip,
  }) => {
    if (!redis) return skip();
    const client = redis.duplicate({ retryStrategy: () => 20, maxRetriesPerRequest: 0 });
    try {
      await client.ping();
      const before = (client as unknown as { stream: Socketish & { destroy(): void } }).stream;
      coalesceWrites(client);
      const held = client.echo('held').then(
        () => 'answered',
        () => 'failed',
      );
      before.destroy();
      await turn();
      // Never written: ioredis fails it (no retries asked for) rather than losing it silently.
      expect(await held).toBe('failed');
      await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      expect((client as unknown as { stream: Socketish }).stream.writableCorked).toBe(0);
      expect(await client.echo('after')).toBe('after');
    } finally {
      client.disconnect();
    }
  });

  it('each step’s event append and checkpoint commit are one socket write, in that order', {
    timeout: 20_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    try {
      const prefix = uniquePrefix('coalesced');
      const registry = new RedisRunRegistry({ redis: client, prefix });
      const events = new RedisRunEventLog({ redis: client, prefix, records: registry });
      const checkpoint = new RedisCheckpointStore({ redis: client, keyPrefix: `${prefix}:checkpoint` });
      const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
      await registry.create(queuedRecord('cw-1', request, Date.now()), request);
      const writes = physicalWrites(client);
      const result = await executeRun(
        { runId: 'cw-1', request },
        {
          agents: agentRegistry([scriptedStepsAgent({ steps: 6, effect: () => {} })]),
          checkpoint,
          registry,
          events,
        },
      );
      expect(result.kind === 'ended' && result.outcome.kind).toBe('answered');
      const together = writes.filter((write) => {
        const text = write.join('');
        const append = text.indexOf(`${prefix}:events:cw-1`);
        const commit = text.indexOf(`${prefix}:checkpoint:{cw-1}`);
        return append >= 0 && commit > append;
      });
      // The five steps that end with a tool call (write-behind: the commit follows its append in the same turn).
      expect(together.length).toBeGreaterThanOrEqual(5);
      // The run's start and its checkpoint load: one write.
      expect(
        writes.some((write) => {
          const text = write.join('');
          return text.includes(`${prefix}:run:cw-1`) && /MULTI/i.test(text);
        }),
      ).toBe(true);
      const trace = await events.read('cw-1', -1);
      expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
      expect((await checkpoint.load('cw-1'))?.trace?.nextSeq).toBe(trace.length);
      expect((await registry.get('cw-1'))?.steps).toBe(6);
    } finally {
      client.disconnect();
    }
  });
});
