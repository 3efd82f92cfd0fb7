import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deltaCommit,
  fixtureState,
  json,
  snapshotCommit,
  stepOf,
} from '../../test/support/checkpoint-fixtures.js';
import { connectTestPostgres } from '../../test/support/postgres.js';
import { isConfigurationError, isReinsError } from '../errors/reins-error.js';
import type { RunState } from '../loop/run-state.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';

let pool: pg.Pool | undefined;
const schema = `reins_pg_checkpoint_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
});

let tables = 0;
const fresh = (options: { createTables?: boolean } = {}) =>
  new PostgresCheckpointStore({ pool: pool!, schema, table: `t${tables++}`, ...options });

async function reasonOf(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (error) {
    return isReinsError(error) ? error.reason : `not a ReinsError: ${String(error)}`;
  }
  return undefined;
}

/** Three commits: a snapshot at 1, deltas at 2 and 3. */
async function threeCommits(store: PostgresCheckpointStore, runId: string): Promise<RunState> {
  let state: RunState = { ...fixtureState(runId), revision: 1 };
  await store.commit(snapshotCommit(fixtureState(runId)));
  for (const label of ['a', 'b']) {
    const next = stepOf(state, label);
    expect(await store.commit(deltaCommit(state, next))).toEqual({ ok: true });
    state = next;
  }
  return state;
}

describe('PostgresCheckpointStore', () => {
  const ready = () => pool !== undefined;

  it('keeps one row per commit until a snapshot, which drops the older rows in the same write', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = fresh();
    const table = `${schema}.t${tables - 1}`;
    const logRows = async () =>
      (await pool!.query(`SELECT revision, snapshot FROM ${table}_log WHERE run_id = 'r' ORDER BY revision`))
        .rows;
    const state = await threeCommits(store, 'r');
    expect(await logRows()).toEqual([
      { revision: 1, snapshot: true },
      { revision: 2, snapshot: false },
      { revision: 3, snapshot: false },
    ]);
    const snapshot = stepOf(state, 'c');
    expect(await store.commit(snapshotCommit(snapshot, 3))).toEqual({ ok: true });
    expect(await logRows()).toEqual([{ revision: 4, snapshot: true }]);
    expect(
      (await pool!.query(`SELECT revision, status, step FROM ${table} WHERE run_id = 'r'`)).rows,
    ).toEqual([{ revision: 4, status: 'running', step: 3 }]);
    expect(json(await store.load('r'))).toEqual(json({ ...snapshot, revision: 4 }));
    // A refused snapshot deletes nothing.
    expect(await store.commit(snapshotCommit(stepOf(state, 'stale'), 3))).toEqual({
      ok: false,
      currentRevision: 4,
    });
    expect(await logRows()).toEqual([{ revision: 4, snapshot: true }]);
  });

  it('reports corrupt stored rows as corrupt_state, never as some other state', async ({ skip }) => {
    if (!ready()) return skip();
    const store = fresh();
    const table = `${schema}.t${tables - 1}`;
    const state = await threeCommits(store, 'c');
    const good = (
      await pool!.query(`SELECT revision, body FROM ${table}_log WHERE run_id = 'c' ORDER BY revision`)
    ).rows as { revision: number; body: string }[];
    const setBody = (revision: number, body: string) =>
      pool!.query(`UPDATE ${table}_log SET body = $1 WHERE run_id = 'c' AND revision = $2`, [body, revision]);
    await setBody(2, '{not json');
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    await setBody(2, JSON.stringify({ ...JSON.parse(good[1]!.body), revision: 7 }));
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    await setBody(2, good[1]!.body);
    await setBody(1, '[1');
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    await setBody(1, good[0]!.body);
    expect(json(await store.load('c'))).toEqual(json(state));
    // The head says 3, the log ends at 2.
    await pool!.query(`DELETE FROM ${table}_log WHERE run_id = 'c' AND revision = 3`);
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    // A log without its snapshot.
    await pool!.query(`DELETE FROM ${table}_log WHERE run_id = 'c' AND revision = 1`);
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
    // A head with no log at all.
    await pool!.query(`DELETE FROM ${table}_log WHERE run_id = 'c'`);
    expect(await reasonOf(() => store.load('c'))).toBe('corrupt_state');
  });

  it('creates its schema and tables on first use, and from many stores at once', async ({ skip }) => {
    if (!ready()) return skip();
    const table = `t${tables++}`;
    const stores = Array.from(
      { length: 6 },
      () => new PostgresCheckpointStore({ pool: pool!, schema, table }),
    );
    // Six first uses racing: the advisory lock keeps CREATE ... IF NOT EXISTS from colliding.
    const loaded = await Promise.all(stores.map((store) => store.load('nothing')));
    expect(loaded).toEqual(Array(6).fill(undefined));
    const results = await Promise.all(
      stores.map((store) => store.commit(snapshotCommit(fixtureState('first')))),
    );
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.filter((result) => !result.ok)).toEqual(Array(5).fill({ ok: false, currentRevision: 1 }));
  });

  it('with createTables off, fails on a missing table instead of creating it', async ({ skip }) => {
    if (!ready()) return skip();
    const store = fresh({ createTables: false });
    await expect(store.load('x')).rejects.toThrow(/does not exist/);
    await store.ensureSchema();
    expect(await store.load('x')).toBeUndefined();
  });

  it('lists runs by status, newest first, and deletes a run', async ({ skip }) => {
    if (!ready()) return skip();
    const store = fresh();
    await store.commit(snapshotCommit(fixtureState('old', { updatedAt: 1_000 })));
    await store.commit(snapshotCommit(fixtureState('new', { updatedAt: 3_000 })));
    const ended = fixtureState('done', { status: 'ended', updatedAt: 2_000 });
    await store.commit(snapshotCommit(ended));
    expect((await store.list()).map((run) => run.runId)).toEqual(['new', 'done', 'old']);
    expect(await store.list({ status: 'ended' })).toEqual([
      { runId: 'done', status: 'ended', step: 0, revision: 1, updatedAt: 2_000 },
    ]);
    expect((await store.list({ status: 'running', limit: 1 })).map((run) => run.runId)).toEqual(['new']);
    await expect(store.list({ limit: 0 })).rejects.toSatisfy(isConfigurationError);
    expect(await store.delete('done')).toBe(true);
    expect(await store.delete('done')).toBe(false);
    expect(await store.load('done')).toBeUndefined();
    // A deleted run starts again at any revision, as a run the store never saw.
    expect(await store.commit(snapshotCommit(ended, 9))).toEqual({ ok: true });
    expect((await store.load('done'))?.revision).toBe(10);
  });

  it('refuses identifiers that are not plain SQL names and a pool without query', () => {
    const bad = [
      () => new PostgresCheckpointStore({ pool: pool!, table: 'x; DROP TABLE y' }),
      () => new PostgresCheckpointStore({ pool: pool!, schema: 'a.b' }),
      () => new PostgresCheckpointStore({ pool: pool!, table: 'x'.repeat(60) }),
      () => new PostgresCheckpointStore({ pool: {} as pg.Pool }),
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
