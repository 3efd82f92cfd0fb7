import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createRunWorker } from 'reins/bullmq';
import { agentRegistry } from 'reins/queue';
import { RedisCheckpointStore } from 'reins/redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { supportAgent } from '../examples/queued-support-agent.js';
import { readServerSentEvents } from '../lab/src/server-sent-events.js';

// `reins serve` as a user runs it (the built CLI, the example's agents module through tsx), driven
// over HTTP: a run is queued, pauses before the refund, is approved and answers. Built first (`npm
// test` builds before vitest).
const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'dist', 'cli', 'reins.js');
const agents = join(root, 'examples', 'queued-support-agent.ts');
const children: ChildProcess[] = [];

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
      if (match) resolve(match[0]);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`reins serve exited ${code}: ${out}`)));
  });
  return { child, url, output: () => out };
}

/** Queues the support run as cust-ana, checks cust-ben is refused, approves the refund, and waits for the end. */
async function queueAndApprove(url: string): Promise<void> {
  const ana = { Authorization: 'Bearer token-for-cust-ana', 'Content-Type': 'application/json' };
  const started = await fetch(`${url}runs`, {
    method: 'POST',
    headers: ana,
    body: JSON.stringify({ agent: 'support', input: 'Refund o-1001?' }),
  });
  expect(started.status).toBe(201);
  const { runId } = (await started.json()) as { runId: string };
  const other = await fetch(`${url}runs/${runId}`, {
    headers: { Authorization: 'Bearer token-for-cust-ben' },
  });
  expect(other.status).toBe(403);

  const stream = await fetch(`${url}runs/${runId}/events`, { headers: ana });
  const seqs: number[] = [];
  let final: { status: string; outcome?: { kind: string } } | undefined;
  for await (const message of readServerSentEvents(stream.body!)) {
    if (message.event === 'end') {
      final = JSON.parse(message.data);
      break;
    }
    const event = JSON.parse(message.data) as { seq: number; type: string; outcome?: { kind: string } };
    seqs.push(event.seq);
    if (event.type === 'run-end' && event.outcome?.kind === 'awaiting_approval') {
      const record = (await (await fetch(`${url}runs/${runId}`, { headers: ana })).json()) as {
        pendingApprovals: { approvalId: string; tool: string }[];
      };
      expect(record.pendingApprovals.map((request) => request.tool)).toEqual(['refund']);
      const stale = await fetch(`${url}runs/${runId}/approvals`, {
        method: 'POST',
        headers: ana,
        body: JSON.stringify({ verdicts: [{ approvalId: 'call_refund:0000', decision: 'approve' }] }),
      });
      expect(stale.status).toBe(409);
      expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('stale_approval');
      const approved = await fetch(`${url}runs/${runId}/approvals`, {
        method: 'POST',
        headers: ana,
        body: JSON.stringify({
          verdicts: [{ approvalId: record.pendingApprovals[0]?.approvalId, decision: 'approve' }],
        }),
      });
      expect(approved.status).toBe(202);
    }
  }
  expect(final).toMatchObject({ status: 'ended', outcome: { kind: 'answered' } });
  expect(seqs).toEqual(seqs.map((_, index) => index));
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('reins serve', () => {
  it('serves the agents module over HTTP: a queued refund pauses, is approved, and the run answers', async () => {
    const served = start(['serve', '--in-process', '--agents', agents, '--port', '0'], {
      REINS_TOKENS: 'token-for-cust-ana=cust-ana, token-for-cust-ben=cust-ben',
    });
    const url = await served.url;
    await vi.waitFor(() => expect(served.output()).toContain('in-process queue'));
    await queueAndApprove(url);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('reins run viewer');
    const exited = new Promise((resolve) => served.child.once('exit', resolve));
    served.child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
    'on BullMQ (the default): the service only queues, a worker elsewhere executes, and the API follows it',
    async () => {
      const redisUrl = process.env['REINS_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
      const prefix = `reins-test:serve:${process.pid}:${Math.random().toString(36).slice(2)}`;
      const served = start(['serve', '--port', '0', '--redis', redisUrl, '--prefix', prefix], {
        REINS_TOKENS: 'token-for-cust-ana=cust-ana, token-for-cust-ben=cust-ben',
      });
      const url = await served.url;
      await vi.waitFor(() => expect(served.output()).toContain('BullMQ jobs'));
      const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
      const refunds: { orderId: string; amount: number }[] = [];
      const worker = await createRunWorker({
        redis,
        prefix,
        agents: agentRegistry([supportAgent({ refunds })]),
        checkpoint: new RedisCheckpointStore({ redis, keyPrefix: `${prefix}:checkpoint` }),
      });
      try {
        await queueAndApprove(url);
        expect(refunds).toEqual([{ orderId: 'o-1001', amount: 84.5 }]);

        // Clients that follow a paused run and drop their connection leave no Redis subscription behind.
        const ana = { Authorization: 'Bearer token-for-cust-ana', 'Content-Type': 'application/json' };
        const { runId } = (await (
          await fetch(`${url}runs`, {
            method: 'POST',
            headers: ana,
            body: '{"agent":"support","input":"Refund?"}',
          })
        ).json()) as { runId: string };
        await vi.waitFor(async () => {
          const record = (await (await fetch(`${url}runs/${runId}`, { headers: ana })).json()) as {
            status: string;
          };
          expect(record.status).toBe('awaiting_approval');
        });
        const channels = () =>
          redis.call('PUBSUB', 'CHANNELS', `${prefix}:events-notice:*`) as Promise<string[]>;
        for (let index = 0; index < 5; index += 1) {
          const controller = new AbortController();
          const stream = await fetch(`${url}runs/${runId}/events`, {
            headers: ana,
            signal: controller.signal,
          });
          await stream.body!.getReader().read();
          await vi.waitFor(async () => expect(await channels()).toHaveLength(1));
          controller.abort();
          // Within the Redis log's poll (5 s): its follow misses an abort that lands outside its
          // wait, and sees it at the next poll (a queue-branch finding, reported).
          await vi.waitFor(async () => expect(await channels()).toEqual([]), {
            timeout: 8_000,
            interval: 100,
          });
        }
      } finally {
        await worker.close();
        const exited = new Promise((resolve) => served.child.once('exit', resolve));
        served.child.kill('SIGINT');
        expect(await exited).toBe(0);
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
    },
  );

  it.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
    'on pg-boss (--engine pgboss, no Redis): `reins serve` queues, `reins worker` executes, the API follows it',
    async () => {
      const postgresUrl = process.env['REINS_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
      const queue = `serve_cli_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const served = start(
        ['serve', '--engine', 'pgboss', '--postgres', postgresUrl, '--queue', queue, '--port', '0'],
        {
          REINS_TOKENS: 'token-for-cust-ana=cust-ana, token-for-cust-ben=cust-ben',
        },
      );
      const url = await served.url;
      await vi.waitFor(() => expect(served.output()).toContain('pg-boss jobs'));
      const worker = spawn(
        process.execPath,
        [
          cli,
          'worker',
          '--engine',
          'pgboss',
          '--agents',
          join(root, 'test', 'fixtures', 'pgboss-cli-agents.mjs'),
          '--postgres',
          postgresUrl,
          '--queue',
          queue,
          '--quiet',
        ],
        { cwd: root, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] },
      );
      children.push(worker);
      let workerErrors = '';
      worker.stderr?.on('data', (chunk: Buffer) => {
        workerErrors += chunk.toString();
      });
      await new Promise<void>((ready, failed) => {
        worker.once('message', () => ready());
        worker.once('exit', (code) => failed(new Error(`reins worker exited ${code}: ${workerErrors}`)));
      });
      try {
        const ana = { Authorization: 'Bearer token-for-cust-ana', 'Content-Type': 'application/json' };
        const started = await fetch(`${url}runs`, {
          method: 'POST',
          headers: ana,
          body: JSON.stringify({ agent: 'steps', input: 'go' }),
        });
        expect(started.status).toBe(201);
        const { runId } = (await started.json()) as { runId: string };
        const other = await fetch(`${url}runs/${runId}`, {
          headers: { Authorization: 'Bearer token-for-cust-ben' },
        });
        expect(other.status).toBe(403);
        const stream = await fetch(`${url}runs/${runId}/events`, { headers: ana });
        const seqs: number[] = [];
        let final: { status: string; outcome?: { kind: string } } | undefined;
        for await (const message of readServerSentEvents(stream.body!)) {
          if (message.event === 'end') {
            final = JSON.parse(message.data);
            break;
          }
          seqs.push((JSON.parse(message.data) as { seq: number }).seq);
        }
        expect(final).toMatchObject({ status: 'ended', outcome: { kind: 'answered' } });
        expect(seqs.length).toBeGreaterThan(10);
        expect(seqs).toEqual(seqs.map((_, index) => index));
      } finally {
        const stopped = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGTERM');
        expect(await stopped).toBe(0);
        const exited = new Promise((resolve) => served.child.once('exit', resolve));
        served.child.kill('SIGINT');
        expect(await exited).toBe(0);
      }
    },
  );

  it('refuses to start without Redis (or PostgreSQL with --engine pgboss), naming what to do (exit 2)', () => {
    const result = spawnSync(process.execPath, [cli, 'serve', '--redis', 'redis://127.0.0.1:1'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/Redis is not reachable at redis:\/\/127\.0\.0\.1:1 .*--in-process/);
    const pgboss = spawnSync(
      process.execPath,
      [cli, 'serve', '--engine', 'pgboss', '--postgres', 'postgres://postgres@127.0.0.1:1/test'],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    expect(pgboss.status).toBe(2);
    expect(pgboss.stderr).toMatch(
      /PostgreSQL is not reachable at postgres:\/\/postgres@127\.0\.0\.1:1\/test .*--postgres/,
    );
    const worker = spawnSync(
      process.execPath,
      [
        cli,
        'worker',
        '--engine',
        'pgboss',
        '--agents',
        join(root, 'test', 'fixtures', 'pgboss-cli-agents.mjs'),
        '--lock-duration-ms',
        '1000',
      ],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    expect(worker.status).toBe(2);
    expect(worker.stderr).toContain('--lock-duration-ms: not supported with --engine pgboss');
  });

  it('makes up a token when none is given, and prints it', async () => {
    const served = start(['serve', '--in-process', '--agents', agents, '--port', '0'], { REINS_TOKENS: '' });
    const url = await served.url;
    await vi.waitFor(() => expect(served.output()).toContain('token (actor'));
    const token = /token \(actor "dev"\): (\S+)/.exec(served.output())?.[1];
    expect(token).toMatch(/^dev-/);
    expect(
      await (await fetch(`${url}session`, { headers: { Authorization: `Bearer ${token}` } })).json(),
    ).toMatchObject({
      actorId: 'dev',
    });
  });

  it('refuses a host that is not loopback, and a module without agents (exit 2)', () => {
    const wide = spawnSync(
      process.execPath,
      [cli, 'serve', '--in-process', '--agents', agents, '--host', '0.0.0.0'],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(wide.status).toBe(2);
    expect(wide.stderr).toContain('not a loopback address');
    const none = spawnSync(
      process.execPath,
      [cli, 'serve', '--in-process', '--agents', join(root, 'package.json')],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('reins serve:');
  });

  it('a worker whose start fails after its agents module opened a connection still exits (exit 2), rather than hang', () => {
    const failed = spawnSync(
      process.execPath,
      [
        cli,
        'worker',
        '--engine',
        'pgboss',
        '--agents',
        join(root, 'test', 'fixtures', 'held-open-agents.mjs'),
        '--checkpoint',
        'sqlite',
        '--sqlite',
        '/nonexistent/dir/checkpoints.db',
      ],
      { cwd: root, encoding: 'utf8', timeout: 30_000 },
    );
    // A hang ends by the 30 s timeout: status null, signal SIGTERM.
    expect({ status: failed.status, signal: failed.signal }).toEqual({ status: 2, signal: null });
    expect(failed.stderr).toContain('reins: Cannot open database');
  });
});
