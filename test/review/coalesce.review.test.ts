import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BullmqRunQueue } from '../../src/bullmq/bullmq-run-queue.js';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import { RedisRunRegistry } from '../../src/bullmq/redis-run-registry.js';
import { createRunWorker } from '../../src/bullmq/run-worker.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import type { ExecuteRunResult } from '../../src/queue/execute-run.js';
import { executeRun } from '../../src/queue/execute-run.js';
import { queuedRecord } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import { coalesceWrites } from '../../src/redis/coalesce-writes.js';
import { RedisCheckpointStore } from '../../src/redis/redis-checkpoint-store.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { connectTestRedis, redisUrl, uniquePrefix } from '../support/redis.js';

let redis: Redis | undefined;
const prefixes: string[] = [];
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(async () => {
  if (redis) {
    for (const prefix of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    }
  }
  redis?.disconnect();
});

function prefixFor(name: string): string {
  const prefix = uniquePrefix(`coalesce-review-${name}`);
  prefixes.push(prefix);
  return prefix;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const turn = () => new Promise<void>((resolve) => process.nextTick(resolve));

interface Socketish {
  writableCorked: number;
  destroy(): void;
  pause(): void;
  write(chunk: unknown, ...rest: unknown[]): boolean;
  _write(chunk: unknown, encoding: string, callback: () => void): void;
  _writev?(chunks: { chunk: unknown }[], callback: () => void): void;
}
const socketOf = (client: Redis) => (client as unknown as { stream: Socketish }).stream;

/** Each write that reaches the socket (one syscall's worth), as text. */
function physicalWrites(client: Redis): string[] {
  const writes: string[] = [];
  const socket = socketOf(client);
  const write = socket._write.bind(socket);
  socket._write = (chunk, encoding, callback) => {
    writes.push(String(chunk));
    write(chunk, encoding, callback);
  };
  const writev = socket._writev?.bind(socket);
  if (writev)
    socket._writev = (chunks, callback) => {
      writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
      writev(chunks, callback);
    };
  return writes;
}

/** MONITOR on its own connection: what Redis executed, in order (a script's inner commands too). */
async function monitorOf(): Promise<{ executed: string[][]; stop(): void }> {
  const monitor = await (redis as Redis).duplicate().monitor();
  const executed: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => executed.push(args));
  return { executed, stop: () => monitor.disconnect() };
}

/** For every delta commit of step k Redis applied, at least k step-ends were already in the log. */
function checkAppliedInOrder(executed: string[][], prefix: string, runId: string): number {
  const stream = `${prefix}:events:${runId}`;
  const logKey = `${prefix}:checkpoint:{${runId}}:log`;
  let stepEnds = 0;
  let commits = 0;
  for (const [command, key, id, , body] of executed) {
    if (command?.toUpperCase() === 'XADD' && key === stream && /"type":"(step|run)-end"/.test(body ?? ''))
      stepEnds++;
    if (command?.toUpperCase() === 'RPUSH' && key === logKey && id?.startsWith('d')) {
      const step = Number(/"step":(\d+)/.exec(id)?.[1]);
      expect(stepEnds, `checkpoint of step ${step} applied before its events`).toBeGreaterThanOrEqual(step);
      commits++;
    }
  }
  return commits;
}

function stores(client: Redis, prefix: string) {
  const registry = new RedisRunRegistry({ redis: client, prefix });
  const events = new RedisRunEventLog({ redis: client, prefix, records: registry });
  const checkpoint = new RedisCheckpointStore({ redis: client, keyPrefix: `${prefix}:checkpoint` });
  return { registry, events, checkpoint };
}

async function expectConsistent(
  result: ExecuteRunResult,
  s: ReturnType<typeof stores>,
  runId: string,
  steps: number,
): Promise<void> {
  expect(result.kind === 'ended' && result.outcome.kind).toBe('answered');
  const trace = await s.events.read(runId, -1);
  expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
  expect(trace.filter((event) => event.type === 'step-end')).toHaveLength(steps - 1);
  expect(trace.filter((event) => event.type === 'run-end')).toHaveLength(1);
  expect((await s.checkpoint.load(runId))?.trace?.nextSeq).toBe(trace.length);
  expect((await s.registry.get(runId))?.steps).toBe(steps);
}

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

describe('review: coalesceWrites (175de5f) — findings, fixed', () => {
  it('finding 1 (fixed): with process.nextTick faked (Jest’s default fake timers), an append on a ready client still leaves the process', {
    timeout: 5_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    const prefix = prefixFor('fake-tick');
    const events = new RedisRunEventLog({ redis: client, prefix });
    const event = {
      v: 1,
      runId: 'ft-1',
      seq: 0,
      at: Date.now(),
      type: 'step-start',
      step: 1,
    } as unknown as TraceEvent;
    const realNextTick = process.nextTick;
    const held: (() => void)[] = [];
    let control: Promise<string> | undefined;
    let appended: Promise<string> | undefined;
    try {
      await client.ping();
      // What jest.useFakeTimers() (or vi.useFakeTimers({ toFake: ['nextTick'] })) does to nextTick.
      process.nextTick = ((callback: (...args: unknown[]) => void, ...args: unknown[]) => {
        held.push(() => callback(...args));
      }) as typeof process.nextTick;
      try {
        // A plain command does not depend on nextTick: it goes out at once.
        control = client.xlen(`${prefix}:events:ft-1`).then(() => 'answered');
        appended = events.append('ft-1', [event]).then(
          () => 'appended',
          () => 'failed',
        );
      } finally {
        process.nextTick = realNextTick;
      }
      expect(await Promise.race([control, sleep(500).then(() => 'pending')])).toBe('answered');
      // The append's cork waits for a nextTick that a fake clock holds: the append is stuck.
      expect(await Promise.race([appended, sleep(500).then(() => 'pending')])).toBe('appended');
    } finally {
      process.nextTick = realNextTick;
      for (const callback of held) callback();
      await appended;
      client.disconnect();
    }
  });

  it('finding 2 (fixed): tools made from one schema each get their own inputJsonSchema: a change to one tool’s does not leak into the others (or a later run’s)', () => {
    const input = z.object({ key: z.string(), step: z.number() });
    const make = (name: string) =>
      defineTool({ name, description: 'd', effect: 'read', input, execute: () => 'ok' });
    const refund = make('refund');
    const lookup = make('lookup');
    // One agent tailors its tool's schema for one provider / one run.
    const properties = refund.inputJsonSchema['properties'] as Record<string, Record<string, unknown>>;
    (properties['key'] as Record<string, unknown>)['description'] = 'the refund id (run 1 only)';
    (refund.inputJsonSchema as Record<string, unknown>)['additionalProperties'] = true;
    const nextRun = make('refund');
    // Before 75be4fc each tool had its own copy; now the edit is in `lookup` and in the next run's tool.
    expect(lookup.inputJsonSchema).not.toHaveProperty('properties.key.description');
    expect(nextRun.inputJsonSchema['additionalProperties']).not.toBe(true);
  });
});

describe('review: coalesceWrites (175de5f) — what held', () => {
  it('held: the reply of a coalesced append+commit is lost after Redis applied both; the resent pair is taken as applied (writer nonces) and the run goes on', {
    timeout: 10_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const prefix = prefixFor('reply-lost');
    const client = redis.duplicate({ retryStrategy: () => 10, maxRetriesPerRequest: 20 });
    const admin = redis.duplicate();
    const monitor = await monitorOf();
    const s = stores(client, prefix);
    let appliedBeforeDrop: { stepEnds: number; step: string | null } | undefined;
    let reconnects = 0;
    client.on('reconnecting', () => reconnects++);
    try {
      await s.registry.create(queuedRecord('rl-1', request, Date.now()), request);
      const agents = agentRegistry([
        scriptedStepsAgent({
          steps: 6,
          effect: ({ step }) => {
            if (step !== 3) return;
            // Stop reading replies: the step's append and commit go out (one write) and are applied,
            // their replies stay unread; then the connection dies and ioredis resends both.
            const socket = socketOf(client);
            socket.pause();
            setTimeout(async () => {
              // Read on another connection: this one reads nothing now.
              const trace = await new RedisRunEventLog({ redis: admin, prefix }).read('rl-1', -1);
              appliedBeforeDrop = {
                stepEnds: trace.filter((event) => event.type === 'step-end').length,
                step: await admin.hget(`${prefix}:checkpoint:{rl-1}:head`, 'step'),
              };
              socket.destroy();
            }, 150);
          },
        }),
      ]);
      const result = await executeRun({ runId: 'rl-1', request }, { ...s, agents });
      expect(reconnects).toBeGreaterThanOrEqual(1);
      // Both had been applied when the connection died: the resends were the "sent again" case.
      expect(appliedBeforeDrop?.stepEnds).toBe(3);
      expect(appliedBeforeDrop?.step).toBe('3');
      await expectConsistent(result, s, 'rl-1', 6);
      await sleep(50);
      expect(checkAppliedInOrder(monitor.executed, prefix, 'rl-1')).toBeGreaterThanOrEqual(5);
    } finally {
      monitor.stop();
      client.disconnect();
      admin.disconnect();
    }
  });

  it('held: the socket dies inside the corked turn (after the append, or after the commit, was buffered); ioredis resends, Redis applies each once, append first', {
    timeout: 10_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    for (const after of ['append', 'commit'] as const) {
      const prefix = prefixFor(`die-corked-${after}`);
      const client = redis.duplicate({ retryStrategy: () => 10, maxRetriesPerRequest: 20 });
      const monitor = await monitorOf();
      const s = stores(client, prefix);
      let killedCorked = 0;
      try {
        await s.registry.create(queuedRecord('dc-1', request, Date.now()), request);
        let armed = false;
        const agents = agentRegistry([
          scriptedStepsAgent({
            steps: 6,
            effect: ({ step }) => {
              if (step !== 2) return;
              armed = true;
              const socket = socketOf(client);
              const write = socket.write.bind(socket);
              const marker = after === 'append' ? `${prefix}:events:dc-1` : `${prefix}:checkpoint:{dc-1}`;
              socket.write = (chunk: unknown, ...rest: unknown[]) => {
                const ok = write(chunk, ...rest);
                if (armed && String(chunk).includes(marker)) {
                  armed = false;
                  if (socket.writableCorked > 0) killedCorked++;
                  socket.destroy();
                }
                return ok;
              };
            },
          }),
        ]);
        const result = await executeRun({ runId: 'dc-1', request }, { ...s, agents });
        expect(killedCorked).toBe(1);
        await expectConsistent(result, s, 'dc-1', 6);
        await sleep(50);
        expect(checkAppliedInOrder(monitor.executed, prefix, 'dc-1')).toBeGreaterThanOrEqual(5);
      } finally {
        monitor.stop();
        client.disconnect();
      }
    }
  });

  it('held: a cork someone else holds outlives ours, and their uncork sends everything', async ({ skip }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    try {
      await client.ping();
      const socket = socketOf(client) as unknown as Socketish & { cork(): void; uncork(): void };
      socket.cork();
      coalesceWrites(client);
      expect(socket.writableCorked).toBe(2);
      const reply = client.echo('held by them');
      await turn();
      expect(socket.writableCorked).toBe(1);
      expect(await Promise.race([reply, sleep(100).then(() => 'pending')])).toBe('pending');
      socket.uncork();
      expect(await reply).toBe('held by them');
    } finally {
      client.disconnect();
    }
  });

  it('held: a cork with nothing sent, or with a command sent later, never holds a reply; what the same turn sends (nextTick callbacks too) is one write, a later task’s is not', async ({
    skip,
  }) => {
    if (!redis) return skip();
    const client = redis.duplicate();
    try {
      await client.ping();
      const writes = physicalWrites(client);
      coalesceWrites(client);
      await sleep(0);
      expect(socketOf(client).writableCorked).toBe(0);
      expect(await client.echo('later')).toBe('later');
      writes.length = 0;

      let early: Promise<string> | undefined;
      let late: Promise<string> | undefined;
      let nextTask: Promise<string> | undefined;
      process.nextTick(() => {
        early = client.echo('early');
      });
      coalesceWrites(client);
      const first = client.echo('first');
      const second = client.echo('second');
      process.nextTick(() => {
        late = client.echo('late');
      });
      setImmediate(() => {
        nextTask = client.echo('next task');
      });
      await sleep(0);
      await new Promise((resolve) => setImmediate(resolve));
      // Whatever ran around the cork is answered; nothing is held past the turn.
      expect(await Promise.all([first, second, early, late, nextTask])).toEqual([
        'first',
        'second',
        'early',
        'late',
        'next task',
      ]);
      // What the turn sent before the uncork (a promise job) is one write; a later task's is its own.
      expect(writes.filter((write) => /first/.test(write))).toEqual([
        expect.stringMatching(/first[\s\S]*second/),
      ]);
      expect(writes.filter((write) => /next task/.test(write))).toEqual([expect.not.stringMatching(/first/)]);
      // Called from inside a nextTick: still released at the end of that turn.
      const fromTick = await new Promise<string>((resolve, reject) =>
        process.nextTick(() => {
          coalesceWrites(client);
          client.echo('tick').then(resolve, reject);
        }),
      );
      expect(fromTick).toBe('tick');
    } finally {
      client.disconnect();
    }
  });

  it('held: disconnect(true) (reconnect) in the corked turn: the held command is answered, the new socket is not corked', async ({
    skip,
  }) => {
    if (!redis) return skip();
    const client = redis.duplicate({ retryStrategy: () => 10, maxRetriesPerRequest: 20 });
    try {
      await client.ping();
      const before = socketOf(client);
      const reconnected = new Promise((resolve) =>
        client.once('reconnecting', () => client.once('ready', resolve)),
      );
      coalesceWrites(client);
      const held = client.echo('held');
      client.disconnect(true);
      expect(await held).toBe('held');
      await reconnected;
      expect(socketOf(client)).not.toBe(before);
      expect(socketOf(client).writableCorked).toBe(0);
      coalesceWrites(client);
      expect(await client.echo('after')).toBe('after');
    } finally {
      client.disconnect();
    }
  });

  it('held: over TLS the pair goes out in one write, in order, and a write-behind run stays consistent', {
    timeout: 10_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const dir = mkdtempSync(join(tmpdir(), 'coalesce-tls-'));
    const upstream = new URL(redisUrl);
    let server: tls.Server | undefined;
    let client: Redis | undefined;
    const sockets = new Set<net.Socket>();
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
    } catch {
      return skip();
    }
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      server = tls.createServer(
        { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
        (front) => {
          const back = net.connect(Number(upstream.port || 6379), upstream.hostname);
          sockets.add(front).add(back);
          front.pipe(back).pipe(front);
          front.on('error', () => back.destroy());
          back.on('error', () => front.destroy());
        },
      );
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as net.AddressInfo).port;
      client = new Redis({
        host: '127.0.0.1',
        port,
        tls: { rejectUnauthorized: false },
        maxRetriesPerRequest: 1,
      });
      await client.ping();
      expect(socketOf(client)).toBeInstanceOf(tls.TLSSocket);
      const writes = physicalWrites(client);
      coalesceWrites(client);
      const replies = Promise.all([client.echo('a'), client.echo('b'), client.echo('c')]);
      expect(socketOf(client).writableCorked).toBe(1);
      expect(await replies).toEqual(['a', 'b', 'c']);
      expect(writes).toHaveLength(1);

      const prefix = prefixFor('tls');
      const monitor = await monitorOf();
      try {
        const s = stores(client, prefix);
        await s.registry.create(queuedRecord('tls-1', request, Date.now()), request);
        const result = await executeRun(
          { runId: 'tls-1', request },
          { ...s, agents: agentRegistry([scriptedStepsAgent({ steps: 6, effect: () => {} })]) },
        );
        await expectConsistent(result, s, 'tls-1', 6);
        await sleep(50);
        expect(checkAppliedInOrder(monitor.executed, prefix, 'tls-1')).toBeGreaterThanOrEqual(5);
      } finally {
        monitor.stop();
      }
    } finally {
      client?.disconnect();
      for (const socket of sockets) socket.destroy();
      server?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('held: a BullMQ worker and queue sharing the one client run a write-behind run to its end, pairs coalesced', {
    timeout: 15_000,
  }, async ({ skip }) => {
    if (!redis) return skip();
    const prefix = prefixFor('bullmq');
    const client = redis.duplicate({ maxRetriesPerRequest: null, retryStrategy: () => 50 });
    await client.ping();
    const checkpoint = new RedisCheckpointStore({ redis: client, keyPrefix: `${prefix}:checkpoint` });
    const executed: Promise<ExecuteRunResult> = new Promise((resolve) => {
      void createRunWorker({
        redis: client,
        prefix,
        checkpoint,
        agents: agentRegistry([scriptedStepsAgent({ steps: 6, effect: () => {} })]),
        onExecuted: (_job, result) => resolve(result),
      }).then((worker) => {
        workerRef = worker;
      });
    });
    let workerRef: Awaited<ReturnType<typeof createRunWorker>> | undefined;
    const queue = new BullmqRunQueue({ redis: client, prefix });
    const writes = physicalWrites(client);
    try {
      const queued = await queue.enqueue({ ...request, runId: 'bq-1' });
      expect(queued.ok).toBe(true);
      const result = await executed;
      expect(result.kind === 'ended' && result.outcome.kind).toBe('answered');
      const trace = await queue.events.read('bq-1', -1);
      expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
      expect((await checkpoint.load('bq-1'))?.trace?.nextSeq).toBe(trace.length);
      const together = writes.filter((text) => {
        const append = text.indexOf(`${prefix}:events:bq-1`);
        const commit = text.indexOf(`${prefix}:checkpoint:{bq-1}`);
        return append >= 0 && commit > append;
      });
      expect(together.length).toBeGreaterThanOrEqual(5);
    } finally {
      await workerRef?.close();
      await queue.close();
      client.disconnect();
    }
  });
});
