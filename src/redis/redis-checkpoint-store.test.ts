import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deltaCommit,
  fixtureState,
  json,
  snapshotCommit,
  stepOf,
} from '../../test/support/checkpoint-fixtures.js';
import { connectTestRedis, uniquePrefix } from '../../test/support/redis.js';
import { isConfigurationError, isReinsError } from '../errors/reins-error.js';
import type { RunState } from '../loop/run-state.js';
import { RedisCheckpointStore } from './redis-checkpoint-store.js';

let redis: Redis | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(() => redis?.disconnect());

async function reasonOf(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (error) {
    return isReinsError(error) ? error.reason : `not a ReinsError: ${String(error)}`;
  }
  return undefined;
}

async function threeCommits(store: RedisCheckpointStore, runId: string): Promise<RunState> {
  let state: RunState = { ...fixtureState(runId), revision: 1 };
  await store.commit(snapshotCommit(fixtureState(runId)));
  for (const label of ['a', 'b']) {
    const next = stepOf(state, label);
    expect(await store.commit(deltaCommit(state, next))).toEqual({ ok: true });
    state = next;
  }
  return state;
}

describe('RedisCheckpointStore', () => {
  const ready = () => redis !== undefined;

  it('keeps a head hash and a log list per run, in one hash slot; a snapshot replaces the list', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const prefix = uniquePrefix('cp-layout');
    const store = new RedisCheckpointStore({ redis: redis!, keyPrefix: prefix });
    const state = await threeCommits(store, 'r');
    const log = await redis!.lrange(`${prefix}:{r}:log`, 0, -1);
    expect(log.map((entry) => entry.slice(0, 2))).toEqual(['s1', 'd2', 'd3']);
    expect(await redis!.hgetall(`${prefix}:{r}:head`)).toEqual({
      revision: '3',
      status: 'running',
      step: '2',
      updatedAt: String(state.updatedAt),
      // The nonce of the call that wrote it: a resend of that call is taken as applied.
      writer: expect.stringMatching(/^[0-9a-z]+\.[0-9a-z]+\.[0-9a-z]+$/),
    });
    expect(await store.head('r')).toEqual({
      revision: 3,
      status: 'running',
      step: 2,
      updatedAt: state.updatedAt,
    });
    const next = stepOf(state, 'c');
    expect(await store.commit(snapshotCommit(next, 3))).toEqual({ ok: true });
    expect((await redis!.lrange(`${prefix}:{r}:log`, 0, -1)).map((entry) => entry.slice(0, 2))).toEqual([
      's4',
    ]);
    expect(json(await store.load('r'))).toEqual(json({ ...next, revision: 4 }));
    expect(await store.delete('r')).toBe(true);
    expect(await store.load('r')).toBeUndefined();
    expect(await store.head('r')).toBeUndefined();
  });

  it('expires an ended run after endedRunTtlMs, keeps a paused one, and a resume makes it persistent', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const prefix = uniquePrefix('cp-ttl');
    const store = new RedisCheckpointStore({ redis: redis!, keyPrefix: prefix, endedRunTtlMs: 60_000 });
    const ttls = async (runId: string) => [
      await redis!.pttl(`${prefix}:{${runId}}:head`),
      await redis!.pttl(`${prefix}:{${runId}}:log`),
    ];
    const running = await threeCommits(store, 'e');
    expect(await ttls('e')).toEqual([-1, -1]);
    const ended: RunState = {
      ...stepOf(running, 'end'),
      status: 'ended',
      outcome: { kind: 'answered', text: 'done' },
    };
    expect(await store.commit(deltaCommit(running, ended))).toEqual({ ok: true });
    for (const ttl of await ttls('e')) expect(ttl).toBeGreaterThan(50_000);
    // Resumed (a new segment's snapshot): kept again.
    const resumed: RunState = { ...stepOf(ended, 'more'), status: 'running', outcome: null };
    expect(await store.commit(snapshotCommit(resumed, ended.revision))).toEqual({ ok: true });
    expect(await ttls('e')).toEqual([-1, -1]);
    // Paused for a person: ended, but kept.
    const paused: RunState = {
      ...stepOf(resumed, 'pause'),
      status: 'ended',
      outcome: { kind: 'awaiting_approval', requests: [] },
    };
    expect(await store.commit(deltaCommit(resumed, paused))).toEqual({
      ok: true,
    });
    expect(await ttls('e')).toEqual([-1, -1]);
    await store.save({ ...paused, outcome: { kind: 'answered', text: 'x' } });
    for (const ttl of await ttls('e')) expect(ttl).toBeGreaterThan(50_000);
  });

  it('reports corrupt entries as corrupt_state, and a delta on a head without a log', async ({ skip }) => {
    if (!ready()) return skip();
    const prefix = uniquePrefix('cp-corrupt');
    const store = new RedisCheckpointStore({ redis: redis!, keyPrefix: prefix });
    const state = await threeCommits(store, 'c');
    const log = `${prefix}:{c}:log`;
    const good = await redis!.lrange(log, 0, -1);
    const cases = [
      'x2:{}',
      'd2{"revision":2}',
      'd2:{not json',
      `d7:${good[1]!.slice(3)}`,
      `s2:${good[0]!.slice(3)}`,
    ];
    for (const bad of cases) {
      await redis!.lset(log, 1, bad);
      expect(await reasonOf(() => store.load('c')), bad).toBe('corrupt_state');
    }
    await redis!.lset(log, 1, good[1]!);
    expect(json(await store.load('c'))).toEqual(json(state));
    await redis!.rpop(log);
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    await redis!.del(log);
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    const next = stepOf(state, 'x');
    expect(await reasonOf(() => store.commit(deltaCommit(state, next)))).toBe('corrupt_state');
  });

  it('waitForReplicas: resolves when enough replicas acknowledged, and throws checkpoint_not_durable otherwise', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const prefix = uniquePrefix('cp-wait');
    const none = new RedisCheckpointStore({
      redis: redis!,
      keyPrefix: prefix,
      waitForReplicas: { replicas: 0, timeoutMs: 10 },
    });
    const state = fixtureState('w');
    expect(await none.commit(snapshotCommit(state))).toEqual({ ok: true });
    // This server has no replica: asking for one times out, and says so. The write stays applied.
    const one = new RedisCheckpointStore({
      redis: redis!,
      keyPrefix: prefix,
      waitForReplicas: { replicas: 1, timeoutMs: 10 },
    });
    const loaded = (await one.load('w'))!;
    expect(await reasonOf(() => one.commit(deltaCommit(loaded, stepOf(loaded, 'a'))))).toBe(
      'checkpoint_not_durable',
    );
    expect((await one.load('w'))?.revision).toBe(2);
  });

  it('waitForAof: fsynced commits on a server with WAITAOF and AOF on; a clear refusal otherwise', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = new RedisCheckpointStore({
      redis: redis!,
      keyPrefix: uniquePrefix('cp-aof'),
      waitForAof: { local: true, replicas: 0, timeoutMs: 1_000 },
    });
    const info = await redis!.info('server');
    const [major, minor] = (/redis_version:(\d+)\.(\d+)/.exec(info) ?? []).slice(1).map(Number) as [
      number,
      number,
    ];
    const appendonly = (await redis!.config('GET', 'appendonly')) as string[];
    const result = await reasonOf(() => store.commit(snapshotCommit(fixtureState('a'))));
    // Before 7.2 there is no WAITAOF; with AOF off it cannot wait for a local fsync.
    if (major < 7 || (major === 7 && minor < 2) || appendonly[1] !== 'yes')
      expect(result).toBe('invalid_option');
    else expect(result).toBeUndefined();
  });

  it('refuses bad options', () => {
    const fake = { defineCommand: () => {} } as unknown as Redis;
    const bad = [
      () => new RedisCheckpointStore({ redis: {} as Redis }),
      () => new RedisCheckpointStore({ redis: fake, endedRunTtlMs: 0 }),
      () => new RedisCheckpointStore({ redis: fake, endedRunTtlMs: 1.5 }),
      () => new RedisCheckpointStore({ redis: fake, waitForReplicas: { replicas: -1, timeoutMs: 10 } }),
      () =>
        new RedisCheckpointStore({ redis: fake, waitForAof: { local: true, replicas: 0, timeoutMs: 0.5 } }),
    ];
    for (const make of bad) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(isConfigurationError(thrown)).toBe(true);
    }
  });
});
