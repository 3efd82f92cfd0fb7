import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  applyCheckpointDeltas,
  type CheckpointDelta,
  type CheckpointStore,
  diffRunStates,
  MemoryCheckpointStore,
} from '../src/checkpoint/index.js';
import { isConfigurationError, isReinsError } from '../src/errors/reins-error.js';
import { resumeAgent } from '../src/loop/run-agent.js';
import type { RunState } from '../src/loop/run-state.js';
import { PostgresCheckpointStore } from '../src/postgres/index.js';
import { RedisCheckpointStore } from '../src/redis/index.js';
import { SqliteCheckpointStore } from '../src/sqlite/sqlite-checkpoint-store.js';
import { fakeClock } from '../src/testing/fake-clock.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { defineTool } from '../src/tools/define-tool.js';
import {
  deltaCommit,
  fixtureState,
  json,
  snapshotCommit,
  stepOf,
  text,
} from './support/checkpoint-fixtures.js';
import { connectTestPostgres } from './support/postgres.js';
import { connectTestRedis, uniquePrefix } from './support/redis.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `store-${files++}.db`);

let redis: Redis | undefined;
let pool: pg.Pool | undefined;
const schema = `reins_conformance_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
beforeAll(async () => {
  redis = await connectTestRedis();
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
  redis?.disconnect();
});

type Store = CheckpointStore & { save(state: RunState): void | Promise<void>; close?(): void };
let tables = 0;
/** Each store's factory; undefined when its server is skipped (REINS_SKIP_POSTGRES / REINS_SKIP_REDIS). */
const stores: [string, () => Promise<Store | undefined>][] = [
  ['memory', async () => new MemoryCheckpointStore()],
  ['sqlite', async () => new SqliteCheckpointStore({ database: freshPath() })],
  [
    'postgres',
    async () => (pool ? new PostgresCheckpointStore({ pool, schema, table: `runs_${tables++}` }) : undefined),
  ],
  [
    'redis',
    async () =>
      redis
        ? new RedisCheckpointStore({ redis, keyPrefix: uniquePrefix('checkpoint-conformance') })
        : undefined,
  ],
];

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isReinsError(error) ? error.reason : `not a ReinsError: ${String(error)}`;
  }
  return undefined;
}

/** What a store's call rejected (or threw) with: the ReinsError's reason. */
async function rejectionOf(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (error) {
    return isReinsError(error) ? error.reason : `not a ReinsError: ${String(error)}`;
  }
  return undefined;
}

describe('diffRunStates', () => {
  it('carries list tails, changed entries and the next revision', () => {
    const base = fixtureState('d', {
      revision: 4,
      repeatCounts: [
        ['a', 1],
        ['b', 2],
      ],
      toolStats: {
        t: {
          calls: 1,
          ok: 1,
          errors: 0,
          validationFailures: 0,
          validationFailureRate: 0,
          truncated: 0,
          denied: 0,
          approvalsRequested: 0,
        },
      },
    });
    const next = {
      ...stepOf(base, 's'),
      repeatCounts: [
        ['a', 1],
        ['b', 3],
        ['c', 1],
      ] as [string, number][],
      terminalFailures: ['k'],
    };
    const delta = diffRunStates(base, next);
    expect(delta.revision).toBe(5);
    expect(delta.messages).toEqual({ from: 1, items: next.messages.slice(1) });
    expect(delta.repeatCounts).toEqual([
      ['b', 3],
      ['c', 1],
    ]);
    // What did not change is left out.
    expect(delta.toolStats).toBeUndefined();
    expect(delta.handoffs).toBeUndefined();
    expect(delta.outcome).toBeUndefined();
    expect(delta.terminalFailures).toEqual({ from: 0, items: ['k'] });
    const truncated = { ...next, messages: [next.messages[0]!, text('user', 'other')] };
    expect(diffRunStates(next, truncated).messages).toEqual({ from: 1, items: [text('user', 'other')] });
    expect(diffRunStates(next, { ...next, messages: [] }).messages).toEqual({ from: 0, items: [] });
  });
});

describe.each(stores)('CheckpointStore conformance: %s', (_name, make) => {
  const open = async (skip: () => void): Promise<Store> => {
    const store = await make();
    if (!store) skip();
    return store as Store;
  };
  it('loads a snapshot plus the deltas after it as the latest state, and nothing for an unknown run', async ({
    skip,
  }) => {
    const store = await open(skip);
    let state = fixtureState('r1');
    expect(await store.commit(snapshotCommit(state))).toEqual({ ok: true });
    state = { ...state, revision: 1 };
    expect(json(await store.load('r1'))).toEqual(json(state));
    for (let i = 0; i < 5; i++) {
      const next = stepOf(state, `s${i}`);
      expect(await store.commit(deltaCommit(state, next))).toEqual({ ok: true });
      state = next;
    }
    const loaded = await store.load('r1');
    expect(loaded?.revision).toBe(6);
    expect(json(loaded)).toEqual(json(state));
    expect(await store.load('missing')).toBeUndefined();
    store.close?.();
  });

  it('refuses a stale expectedRevision with the current revision, and changes nothing', async ({ skip }) => {
    const store = await open(skip);
    const first = fixtureState('r2');
    await store.commit(snapshotCommit(first));
    const one = { ...first, revision: 1 };
    const two = stepOf(one, 'a');
    expect(await store.commit(deltaCommit(one, two))).toEqual({ ok: true });
    const before = json(await store.load('r2'));
    // A delta and a snapshot written on top of revision 1 again (a second resume of one state).
    expect(await store.commit(deltaCommit(one, stepOf(one, 'stale')))).toEqual({
      ok: false,
      currentRevision: 2,
    });
    expect(await store.commit(snapshotCommit(stepOf(one, 'stale'), 1))).toEqual({
      ok: false,
      currentRevision: 2,
    });
    expect(await store.commit(snapshotCommit(two, 7))).toEqual({ ok: false, currentRevision: 2 });
    expect(json(await store.load('r2'))).toEqual(before);
    store.close?.();
  });

  it('lets exactly one of two workers that loaded the same revision commit', async ({ skip }) => {
    const store = await open(skip);
    await store.commit(snapshotCommit(fixtureState('r3')));
    for (let round = 0; round < 10; round++) {
      const seenByA = (await store.load('r3'))!;
      const seenByB = (await store.load('r3'))!;
      const a = stepOf(seenByA, `a${round}`);
      const b = stepOf(seenByB, `b${round}`);
      const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
      const [firstSeen, secondSeen] = round % 2 === 0 ? [seenByA, seenByB] : [seenByB, seenByA];
      const results = [
        await store.commit(deltaCommit(firstSeen, first)),
        await store.commit(deltaCommit(secondSeen, second)),
      ];
      expect(results).toEqual([{ ok: true }, { ok: false, currentRevision: first.revision }]);
      expect(json(await store.load('r3'))).toEqual(json(first));
    }
    store.close?.();
  });

  it('takes a new run at expectedRevision 0 and refuses expectedRevision 0 once the run exists', async ({
    skip,
  }) => {
    const store = await open(skip);
    const state = fixtureState('r4');
    expect(await store.commit(snapshotCommit(state, 0))).toEqual({ ok: true });
    expect(await store.commit(snapshotCommit(state, 0))).toEqual({ ok: false, currentRevision: 1 });
    const one = { ...state, revision: 1 };
    expect(
      await store.commit(deltaCommit({ ...one, revision: 0 }, { ...stepOf(one, 'x'), revision: 1 })),
    ).toEqual({
      ok: false,
      currentRevision: 1,
    });
    expect(json(await store.load('r4'))).toEqual(json(one));
    // A delta for a run the store has never seen has nothing to apply to.
    const orphan = fixtureState('r4-orphan');
    expect(await rejectionOf(() => store.commit(deltaCommit(orphan, stepOf(orphan, 'y'))))).toBe(
      'corrupt_state',
    );
    expect(await store.load('r4-orphan')).toBeUndefined();
    store.close?.();
  });

  it('resets the base at a snapshot in the middle of a run', async ({ skip }) => {
    const store = await open(skip);
    let state = fixtureState('r5');
    await store.commit(snapshotCommit(state));
    state = { ...state, revision: 1 };
    for (const label of ['a', 'b', 'c']) {
      const next = stepOf(state, label);
      await store.commit(deltaCommit(state, next));
      state = next;
    }
    // A compacted transcript, written whole: nothing before it is needed any more.
    const compacted = { ...stepOf(state, 'd'), messages: [text('user', 'summary')], completedMessages: 1 };
    expect(await store.commit(snapshotCommit(compacted, state.revision))).toEqual({ ok: true });
    state = compacted;
    expect(json(await store.load('r5'))).toEqual(json(state));
    const next = stepOf(state, 'e');
    await store.commit(deltaCommit(state, next));
    expect(json(await store.load('r5'))).toEqual(json(next));
    expect((await store.load('r5'))?.messages).toHaveLength(3);
    store.close?.();
  });

  it('takes a whole-state save (the older contract) and commits on top of it', async ({ skip }) => {
    const store = await open(skip);
    const state = fixtureState('r6');
    await store.save(state);
    const saved = (await store.load('r6'))!;
    expect(json(saved)).toEqual(json({ ...state, revision: 1 }));
    const next = stepOf(saved, 'a');
    expect(await store.commit(deltaCommit(saved, next))).toEqual({ ok: true });
    await store.save({ ...next, step: 99 });
    expect((await store.load('r6'))?.revision).toBe(3);
    expect((await store.load('r6'))?.step).toBe(99);
    store.close?.();
  });

  it('loads the last committed state after any sequence of changes, deltas and snapshots', async ({
    skip,
  }) => {
    const store = await open(skip);
    let runs = 0;
    const label = fc.string({ unit: 'binary', maxLength: 12 });
    const change = fc.oneof(
      fc.record({
        kind: fc.constant('messages' as const),
        texts: fc.array(label, { minLength: 1, maxLength: 3 }),
      }),
      fc.record({
        kind: fc.constant('usage' as const),
        tokens: fc.nat(5_000),
        cost: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({
        kind: fc.constant('repeat' as const),
        key: fc.constantFrom('a', 'b', 'c', 'd'),
        count: fc.nat(9),
      }),
      fc.record({ kind: fc.constant('failure' as const), key: label }),
      fc.record({ kind: fc.constant('handoff' as const), tool: label, n: fc.nat() }),
      fc.record({ kind: fc.constant('trusted' as const), value: label }),
      fc.record({
        kind: fc.constant('stats' as const),
        tool: fc.constantFrom('read', 'write'),
        calls: fc.nat(20),
      }),
      fc.record({ kind: fc.constant('pending' as const), on: fc.boolean() }),
      fc.record({ kind: fc.constant('end' as const), text: label }),
      fc.record({
        kind: fc.constant('truncate' as const),
        keep: fc.nat(6),
        texts: fc.array(label, { maxLength: 2 }),
      }),
    );
    const steps = fc.array(fc.record({ change, snapshot: fc.nat(9).map((n) => n === 0) }), { maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(steps, async (sequence) => {
        const runId = `prop-${runs++}`;
        let state: RunState = { ...fixtureState(runId), revision: 1 };
        expect(await store.commit(snapshotCommit(fixtureState(runId)))).toEqual({ ok: true });
        for (const { change: c, snapshot } of sequence) {
          const next: RunState = structuredClone({
            ...state,
            revision: (state.revision ?? 0) + 1,
            step: state.step + 1,
            updatedAt: state.updatedAt + 1,
            elapsedMs: state.elapsedMs + 3,
          });
          switch (c.kind) {
            case 'messages':
              for (const t of c.texts) next.messages.push(text('assistant', t));
              next.completedMessages = next.messages.length;
              break;
            case 'usage':
              next.usage.inputTokens += c.tokens;
              next.billedTokens += c.tokens;
              next.costUsd += c.cost;
              next.contextTokens = c.tokens;
              next.toolErrors += c.tokens % 2;
              break;
            case 'repeat': {
              const entry = next.repeatCounts.find(([key]) => key === c.key);
              if (entry) entry[1] = c.count;
              else next.repeatCounts.push([c.key, c.count]);
              break;
            }
            case 'failure':
              next.terminalFailures!.push(c.key);
              break;
            case 'handoff':
              next.handoffs!.push({
                kind: 'draft',
                callId: `c${c.n}`,
                tool: c.tool,
                input: { n: c.n },
                step: next.step,
                reason: 'draft',
              });
              break;
            case 'trusted':
              next.taint ??= { untrustedResults: 0, trustedValues: [] };
              next.taint.untrustedResults += 1;
              next.taint.trustedValues.push(c.value);
              break;
            case 'stats':
              next.toolStats![c.tool] = {
                calls: c.calls,
                ok: c.calls,
                errors: 0,
                validationFailures: 0,
                validationFailureRate: 0,
                truncated: 0,
                denied: 0,
                approvalsRequested: c.calls % 3,
              };
              break;
            case 'pending':
              next.pending = c.on
                ? {
                    step: next.step,
                    calls: [{ type: 'tool_use', id: 'p', name: 'write', input: { n: next.step } }],
                    thought: 'ask',
                  }
                : null;
              next.drift = c.on ? { actions: [`a${next.step}`], worldStates: [] } : null;
              break;
            case 'end':
              next.status = 'ended';
              next.outcome = { kind: 'answered', text: c.text };
              break;
            case 'truncate':
              next.messages.length = Math.min(c.keep, next.messages.length);
              for (const t of c.texts) next.messages.push(text('user', t));
              next.completedMessages = next.messages.length;
              next.trace = { segment: (next.trace?.segment ?? 0) + 1, nextSeq: 0 };
              break;
          }
          const commit = snapshot ? snapshotCommit(next, state.revision) : deltaCommit(state, next);
          expect(await store.commit(commit)).toEqual({ ok: true });
          state = next;
        }
        expect(json(await store.load(runId))).toEqual(json(state));
      }),
      { numRuns: 150 },
    );
    store.close?.();
  });
});

describe('SqliteCheckpointStore', () => {
  it('lets exactly one of two connections on one file commit each revision', () => {
    const path = freshPath();
    const a = new SqliteCheckpointStore({ database: path });
    const b = new SqliteCheckpointStore({ database: path });
    a.commit(snapshotCommit(fixtureState('race')));
    const winners: string[] = [];
    for (let round = 0; round < 20; round++) {
      const seenByA = a.load('race')!;
      const seenByB = b.load('race')!;
      expect(seenByB.revision).toBe(seenByA.revision);
      const order: [SqliteCheckpointStore, RunState, string][] =
        round % 3 === 0
          ? [
              [b, seenByB, 'b'],
              [a, seenByA, 'a'],
            ]
          : [
              [a, seenByA, 'a'],
              [b, seenByB, 'b'],
            ];
      const results = order.map(([store, seen, name]) => {
        const result = store.commit(deltaCommit(seen, stepOf(seen, `${name}${round}`)));
        if (result.ok) winners.push(`${name}${round}`);
        return result;
      });
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results[1]).toEqual({ ok: false, currentRevision: seenByA.revision! + 1 });
    }
    a.close();
    b.close();
    const reopened = new SqliteCheckpointStore({ database: path });
    const final = reopened.load('race')!;
    expect(final.revision).toBe(21);
    expect(
      final.messages
        .filter((m) => m.role === 'assistant')
        .map((m) => (m.content[0] as { text: string }).text),
    ).toEqual(winners.map((winner) => `${winner} asks`));
    reopened.close();
  });

  it('serializes commits from several processes: every revision has exactly one winner', {
    timeout: 60_000,
  }, async () => {
    const path = freshPath();
    const setup = new SqliteCheckpointStore({ database: path });
    setup.commit(snapshotCommit(fixtureState('procs', { messages: [], completedMessages: 0 })));
    setup.close();
    const root = fileURLToPath(new URL('..', import.meta.url));
    const child = join(dir, 'race-child.mjs');
    writeFileSync(
      child,
      `const [storeUrl, deltaUrl, path, startAt, target, name] = process.argv.slice(2);
const { SqliteCheckpointStore } = await import(storeUrl);
const { diffRunStates } = await import(deltaUrl);
const store = new SqliteCheckpointStore({ database: path });
while (Date.now() < Number(startAt)) {}
const wins = [];
let refused = 0;
for (;;) {
  const state = store.load('procs');
  if (state.revision >= Number(target)) break;
  const revision = state.revision + 1;
  const next = { ...state, revision, step: state.step + 1, completedMessages: state.messages.length + 1,
    messages: [...state.messages, { role: 'user', content: [{ type: 'text', text: name + ' ' + revision }] }] };
  const result = store.commit({ runId: 'procs', expectedRevision: state.revision, revision, status: 'running',
    step: next.step, updatedAt: Date.now(), delta: diffRunStates(state, next) });
  if (result.ok) wins.push(revision);
  else refused++;
}
store.close();
process.stdout.write(JSON.stringify({ wins, refused }));
`,
    );
    const storeUrl = new URL('../src/sqlite/sqlite-checkpoint-store.ts', import.meta.url).href;
    const deltaUrl = new URL('../src/checkpoint/checkpoint-delta.ts', import.meta.url).href;
    const target = 120;
    const startAt = Date.now() + 3_000;
    const runChild = (name: string) =>
      new Promise<{ wins: number[]; refused: number }>((resolve, reject) => {
        const proc = spawn(
          process.execPath,
          ['--import', 'tsx', child, storeUrl, deltaUrl, path, String(startAt), String(target), name],
          { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        proc.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
        });
        proc.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        proc.on('error', reject);
        proc.on('exit', (code) =>
          code === 0
            ? resolve(JSON.parse(stdout))
            : reject(new Error(`child ${name} exited ${code}: ${stderr}`)),
        );
      });
    const names = ['p0', 'p1', 'p2'];
    const results = await Promise.all(names.map(runChild));
    const wins = results.flatMap((result) => result.wins).sort((x, y) => x - y);
    expect(wins).toEqual(Array.from({ length: target - 1 }, (_, i) => i + 2));
    const store = new SqliteCheckpointStore({ database: path });
    const final = store.load('procs')!;
    expect(final.revision).toBe(target);
    const winnerOf = new Map(results.flatMap((result, i) => result.wins.map((w) => [w, names[i]] as const)));
    expect(final.messages.map((m) => (m.content[0] as { text: string }).text)).toEqual(
      wins.map((w) => `${winnerOf.get(w)} ${w}`),
    );
    store.close();
  });

  it('loads a database written before revisions, and takes commits on top of it', () => {
    const path = freshPath();
    // The old schema and an old row, frozen: the whole state as JSON, no revision anywhere.
    const legacy = fixtureState('old', { step: 2, updatedAt: 2_000 });
    delete legacy.revision;
    delete legacy.trace;
    const raw = new Database(path);
    raw.exec(
      'CREATE TABLE reins_checkpoints (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, step INTEGER NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL)',
    );
    raw
      .prepare('INSERT INTO reins_checkpoints VALUES (?, ?, ?, ?, ?)')
      .run('old', 'running', 2, JSON.stringify(legacy), 2_000);
    raw
      .prepare('INSERT INTO reins_checkpoints VALUES (?, ?, ?, ?, ?)')
      .run('old2', 'ended', 5, JSON.stringify({ ...legacy, runId: 'old2', step: 5, status: 'ended' }), 1_500);
    raw.close();

    const store = new SqliteCheckpointStore({ database: path });
    expect(store.list()).toEqual([
      { runId: 'old', status: 'running', step: 2, updatedAt: 2_000 },
      { runId: 'old2', status: 'ended', step: 5, updatedAt: 1_500 },
    ]);
    const loaded = store.load('old')!;
    expect(json(loaded)).toEqual(json({ ...legacy, revision: 0 }));
    const next = stepOf(loaded, 'new');
    expect(store.commit(deltaCommit(loaded, next))).toEqual({ ok: true });
    expect(store.commit(deltaCommit(loaded, stepOf(loaded, 'again')))).toEqual({
      ok: false,
      currentRevision: 1,
    });
    expect(json(store.load('old'))).toEqual(json(next));
    const after = stepOf(next, 'more');
    expect(store.commit(deltaCommit(next, after))).toEqual({ ok: true });
    // A snapshot on top of the other old row.
    const old2 = store.load('old2')!;
    expect(store.commit(snapshotCommit({ ...old2, status: 'running' }, 0))).toEqual({ ok: true });
    store.close();

    const reopened = new SqliteCheckpointStore({ database: path });
    expect(json(reopened.load('old'))).toEqual(json(after));
    expect(reopened.load('old2')).toMatchObject({ revision: 1, status: 'running', step: 5 });
    reopened.close();
    const check = new Database(path);
    const columns = check.pragma('table_info(reins_checkpoints)') as { name: string }[];
    expect(columns.map((column) => column.name)).toContain('revision');
    expect(check.prepare("SELECT revision, state FROM reins_checkpoints WHERE run_id = 'old'").get()).toEqual(
      {
        revision: 2,
        state: '',
      },
    );
    check.close();
  });

  it('keeps the log to the last snapshot and the deltas after it, and the state out of the head', () => {
    const path = freshPath();
    const store = new SqliteCheckpointStore({ database: path, table: 'my_runs' });
    const raw = new Database(path);
    const logRows = () =>
      raw.prepare("SELECT revision, snapshot FROM my_runs_log WHERE run_id = 'r' ORDER BY revision").all();
    let state: RunState = { ...fixtureState('r'), revision: 1 };
    store.commit(snapshotCommit(fixtureState('r')));
    for (const label of ['a', 'b']) {
      const next = stepOf(state, label);
      store.commit(deltaCommit(state, next));
      state = next;
    }
    expect(logRows()).toEqual([
      { revision: 1, snapshot: 1 },
      { revision: 2, snapshot: 0 },
      { revision: 3, snapshot: 0 },
    ]);
    store.commit(snapshotCommit(stepOf(state, 'c'), 3));
    expect(logRows()).toEqual([{ revision: 4, snapshot: 1 }]);
    expect(raw.prepare("SELECT state, revision, step FROM my_runs WHERE run_id = 'r'").get()).toEqual({
      state: null,
      revision: 4,
      step: 3,
    });
    raw.close();
    store.close();
  });

  it('reports a corrupt stored checkpoint as corrupt_state, and a bad table name as a configuration error', () => {
    const path = freshPath();
    const store = new SqliteCheckpointStore({ database: path });
    const raw = new Database(path);
    let state: RunState = { ...fixtureState('c'), revision: 1 };
    store.commit(snapshotCommit(fixtureState('c')));
    for (const label of ['a', 'b']) {
      const next = stepOf(state, label);
      store.commit(deltaCommit(state, next));
      state = next;
    }
    const setBody = (revision: number, body: string) =>
      raw
        .prepare("UPDATE reins_checkpoints_log SET body = ? WHERE run_id = 'c' AND revision = ?")
        .run(body, revision);
    const good = raw
      .prepare("SELECT revision, body FROM reins_checkpoints_log WHERE run_id = 'c' ORDER BY revision")
      .all() as { revision: number; body: string }[];
    setBody(2, '{not json');
    expect(reasonOf(() => store.load('c'))).toBe('corrupt_state');
    setBody(2, '{}');
    expect(reasonOf(() => store.load('c'))).toBe('corrupt_state');
    setBody(2, JSON.stringify({ ...JSON.parse(good[1]!.body), messages: { from: 99, items: [] } }));
    expect(reasonOf(() => store.load('c'))).toBe('corrupt_state');
    setBody(2, good[1]!.body);
    setBody(1, '[1');
    expect(reasonOf(() => store.load('c'))).toBe('corrupt_state');
    setBody(1, good[0]!.body);
    expect(json(store.load('c'))).toEqual(json(state));
    // The head says revision 3 but the log ends at 2.
    raw.prepare("DELETE FROM reins_checkpoints_log WHERE run_id = 'c' AND revision = 3").run();
    expect(reasonOf(() => store.load('c'))).toBe('corrupt_state');
    // A log without a snapshot takes no delta.
    raw.prepare("DELETE FROM reins_checkpoints_log WHERE run_id = 'c' AND revision = 1").run();
    const next = stepOf(state, 'x');
    expect(reasonOf(() => store.commit(deltaCommit(state, next)))).toBe('corrupt_state');
    expect(reasonOf(() => store.load('c'))).toBe('corrupt_state');
    raw.close();
    store.close();
    let thrown: unknown;
    try {
      new SqliteCheckpointStore({ database: path, table: 'x; DROP TABLE y' });
    } catch (error) {
      thrown = error;
    }
    expect(isConfigurationError(thrown)).toBe(true);
  });
});

// Frozen: a log written before deltas left out what did not change (every field in every delta, drift
// windows whole). It must keep loading, and take new deltas on top.
describe('a checkpoint log written by an older version', () => {
  const log = JSON.parse(
    readFileSync(new URL('./fixtures/checkpoint-log-v1.json', import.meta.url), 'utf8'),
  ) as { snapshot: RunState; deltas: CheckpointDelta[]; state: RunState };

  it('applies to the state the run returned', () => {
    expect(json(applyCheckpointDeltas(log.snapshot, log.deltas))).toEqual(log.state);
  });

  it('loads from SQLite, and a resume commits new deltas on top of it', async () => {
    const path = freshPath();
    new SqliteCheckpointStore({ database: path }).close();
    const raw = new Database(path);
    raw
      .prepare(
        'INSERT INTO reins_checkpoints (run_id, status, step, state, updated_at, revision) VALUES (?, ?, ?, NULL, ?, ?)',
      )
      .run('v1-log', log.state.status, log.state.step, log.state.updatedAt, log.state.revision);
    const row = raw.prepare(
      'INSERT INTO reins_checkpoints_log (run_id, revision, snapshot, body) VALUES (?, ?, ?, ?)',
    );
    row.run('v1-log', log.snapshot.revision, 1, JSON.stringify(log.snapshot));
    for (const delta of log.deltas) row.run('v1-log', delta.revision, 0, JSON.stringify(delta));
    raw.close();
    const store = new SqliteCheckpointStore({ database: path });
    const loaded = store.load('v1-log') as RunState;
    expect(json(loaded)).toEqual(log.state);
    const sent: string[] = [];
    const send = defineTool({
      name: 'send',
      description: 'Send a message.',
      effect: 'write',
      input: z.object({ to: z.string() }),
      execute: ({ to }) => {
        sent.push(to);
        return { sent: to };
      },
    });
    const outcome = log.state.outcome as { requests: { approvalId: string }[] };
    const resumed = await resumeAgent(loaded, {
      model: scriptedModel([{ text: 'Sent.' }]),
      tools: [send],
      maxSteps: 20,
      clock: fakeClock(),
      taint: { policies: { send: { caps: { maxCalls: 5 } } } },
      approvals: outcome.requests.map((request) => ({ approvalId: request.approvalId, decision: 'approve' })),
      checkpoint: store,
    });
    expect(resumed.outcome).toEqual({ kind: 'answered', text: 'Sent.' });
    expect(sent).toEqual(['evil@example.com']);
    expect(json(store.load('v1-log'))).toEqual(json(resumed.state));
    store.close();
  });
});
