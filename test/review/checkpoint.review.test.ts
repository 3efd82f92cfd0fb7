import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckpointCommit, CheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import type { RunState } from '../../src/loop/run-state.js';
import { PostgresCheckpointStore } from '../../src/postgres/postgres-checkpoint-store.js';
import { RedisCheckpointStore } from '../../src/redis/redis-checkpoint-store.js';
import { deltaCommit, fixtureState, snapshotCommit, stepOf } from '../support/checkpoint-fixtures.js';
import { connectTestPostgres } from '../support/postgres.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

let pool: pg.Pool | undefined;
const clients: Redis[] = [];
const schema = `reins_review_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
  for (const client of clients) client.disconnect();
});
let tables = 0;
const prefix = uniquePrefix('review-cp');
const stores: Record<string, () => CheckpointStore> = {
  postgres: () => new PostgresCheckpointStore({ pool: pool!, schema, table: `t${tables++}` }),
  redis: () => {
    const redis = new Redis(redisUrl);
    clients.push(redis);
    return new RedisCheckpointStore({ redis, keyPrefix: `${prefix}:${tables++}` });
  },
};

const settle = async (run: () => unknown) => {
  try {
    return { value: await run() };
  } catch (error) {
    return { error };
  }
};

describe.each(Object.keys(stores))('review: %s checkpoint store', (name) => {
  it('a commit whose revision is not expectedRevision + 1 is refused, not stored to corrupt the run', async () => {
    const store = stores[name]!();
    const state = { ...fixtureState('jump'), revision: 1 };
    expect(await store.commit(snapshotCommit(fixtureState('jump')))).toEqual({ ok: true });
    const next = stepOf(state, 'a');
    const commit = deltaCommit(state, next);
    // A writer bug (or a replayed, edited job) claims revision 5 from 1.
    const bad = { ...commit, revision: 5, delta: { ...commit.delta!, revision: 5 } };
    const result = await settle(() => store.commit(bad as CheckpointCommit));
    const accepted = 'value' in result && (result.value as { ok: boolean }).ok;
    const load = await settle(() => store.load('jump'));
    // Either the store refuses the commit, or what it accepted still loads.
    expect(accepted && 'error' in load ? 'accepted a commit that made the run unloadable' : 'ok').toBe('ok');
  });

  it('of 16 concurrent writers at one revision exactly one applies, and the run loads', async () => {
    const store = stores[name]!();
    const state = { ...fixtureState('race'), revision: 1 };
    await store.commit(snapshotCommit(fixtureState('race')));
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i % 2 === 0
          ? store.commit(deltaCommit(state, stepOf(state, `w${i}`)))
          : store.commit(snapshotCommit({ ...stepOf(state, `w${i}`), revision: 1 })),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const loaded = await store.load('race');
    expect(loaded?.revision).toBe(2);
  });

  it('a 4 MB state round-trips', async () => {
    const store = stores[name]!();
    const big = fixtureState('big', {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'é'.repeat(2_000_000) }] }],
    });
    expect(await store.commit(snapshotCommit(big))).toEqual({ ok: true });
    const loaded = await store.load('big');
    expect(loaded?.messages[0]).toEqual(big.messages[0]);
  });

  it('loads concurrent with commits (deltas and snapshots) never see a torn log', async () => {
    const store = stores[name]!();
    let state: RunState = { ...fixtureState('torn'), revision: 1 };
    await store.commit(snapshotCommit(fixtureState('torn')));
    let done = false;
    const failures: unknown[] = [];
    const seen: number[] = [];
    const readers = Array.from({ length: 3 }, async () => {
      while (!done) {
        try {
          const loaded = await store.load('torn');
          seen.push(loaded?.revision ?? -1);
        } catch (error) {
          failures.push(error);
        }
      }
    });
    for (let i = 0; i < 60; i++) {
      const next = stepOf(state, `s${i}`);
      const commit =
        i % 7 === 6
          ? snapshotCommit({ ...next, revision: state.revision as number })
          : deltaCommit(state, next);
      expect(await store.commit(commit)).toEqual({ ok: true });
      state = next;
    }
    done = true;
    await Promise.all(readers);
    expect(failures).toEqual([]);
    expect((await store.load('torn'))?.revision).toBe(61);
    expect(seen.length).toBeGreaterThan(0);
  });
});
