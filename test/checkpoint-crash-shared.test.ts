// kill -9 against the shared checkpoint stores (real processes, real PostgreSQL and Redis): a child
// killed while committing in a loop leaves a state the store loads whole, and an agent run killed at
// random steps resumes on the next process without re-running a step the store recorded.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckpointStore } from '../src/checkpoint/index.js';
import { PostgresCheckpointStore } from '../src/postgres/index.js';
import { RedisCheckpointStore } from '../src/redis/index.js';
import { randomInt, seededRandom } from '../src/testing/seeded-random.js';
// @ts-expect-error: a plain ESM fixture the child processes share, without types.
import { stateAt } from './fixtures/checkpoint-crash-states.mjs';
import { json } from './support/checkpoint-fixtures.js';
import { runChild } from './support/kill-child.js';
import { connectTestPostgres, postgresUrl } from './support/postgres.js';
import { connectTestRedis, redisUrl, uniquePrefix } from './support/redis.js';

const built = new URL('../dist/index.js', import.meta.url).pathname;
const commitChild = new URL('./fixtures/checkpoint-crash-child.mjs', import.meta.url).pathname;
const agentChild = new URL('./fixtures/crash-child-shared.mjs', import.meta.url).pathname;
const workspace = mkdtempSync(join(tmpdir(), 'reins-crash-shared-'));
const schema = `reins_crash_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
let redis: Redis | undefined;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  redis = await connectTestRedis();
  pool = await connectTestPostgres();
  // Created once here, so no child is killed halfway through creating the tables.
  if (pool) await new PostgresCheckpointStore({ pool, schema }).ensureSchema();
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
  redis?.disconnect();
  rmSync(workspace, { recursive: true, force: true });
});

type Kind = {
  url: string;
  namespace: () => string;
  store: (namespace: string) => CheckpointStore | undefined;
};
const kinds: [string, Kind][] = [
  [
    'postgres',
    {
      url: postgresUrl,
      namespace: () => schema,
      store: () => (pool ? new PostgresCheckpointStore({ pool, schema }) : undefined),
    },
  ],
  [
    'redis',
    {
      url: redisUrl,
      namespace: () => uniquePrefix('crash'),
      store: (keyPrefix) => (redis ? new RedisCheckpointStore({ redis, keyPrefix }) : undefined),
    },
  ],
];

const lastCommitted = (stdout: string): number =>
  Math.max(0, ...[...stdout.matchAll(/committed (\d+)\n/g)].map((match) => Number(match[1])));

describe.each(kinds)('SIGKILL while committing (%s)', (name, kind) => {
  it('loads the last revision the child saw committed or the one in flight, whole, and commits go on from it', {
    timeout: 240_000,
  }, async ({ skip }) => {
    const namespace = kind.namespace();
    const store = kind.store(namespace);
    if (!store) return skip();
    expect(existsSync(built), 'run `npm run build` first (npm test does)').toBe(true);
    const random = seededRandom(name === 'postgres' ? 20261203 : 20261204);
    const runId = `commit-loop-${Math.random().toString(36).slice(2)}`;
    let kills = 0;
    let inFlightApplied = 0;
    let floor = 0;
    for (let trial = 0; trial < 10; trial++) {
      // Each child continues the run from what the store holds and is killed a few commits in.
      const killAt = floor + randomInt(random, 2, 40);
      const outcome = await runChild(commitChild, [name, kind.url, namespace, runId, String(floor + 1_000)], {
        killWhen: (stdout) => lastCommitted(stdout) >= killAt,
        delayMs: randomInt(random, 0, 3),
      });
      expect(outcome.killed, `trial ${trial}: the child was killed before it finished`).toBe(true);
      kills++;
      const seen = lastCommitted(outcome.stdout);
      const loaded = await store.load(runId);
      const revision = loaded?.revision ?? 0;
      expect(revision, `trial ${trial}: after committed ${seen}`).toBeGreaterThanOrEqual(seen);
      expect(revision, `trial ${trial}: after committed ${seen}`).toBeLessThanOrEqual(seen + 1);
      if (revision > seen) inFlightApplied++;
      // Never a torn state: exactly the state of that revision, field for field.
      expect(json(loaded), `trial ${trial}: state at revision ${revision}`).toEqual(
        json(stateAt(runId, revision)),
      );
      floor = revision;
    }
    expect(kills).toBe(10);
    console.log(
      `${name} commit-loop crash: ${kills} SIGKILLs, ${inFlightApplied} landed with the commit in flight applied`,
    );
  });
});

const effects = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).map(Number) : [];

describe.each(kinds)('resume after SIGKILL (%s checkpoints)', (name, kind) => {
  it('finishes every run, and never re-runs a completed step\u2019s tool call', {
    timeout: 300_000,
  }, async ({ skip }) => {
    const namespace = kind.namespace();
    const store = kind.store(namespace);
    if (!store) return skip();
    expect(existsSync(built), 'run `npm run build` first (npm test does)').toBe(true);
    const random = seededRandom(name === 'postgres' ? 20261205 : 20261206);
    const trials = 5;
    let kills = 0;
    for (let trial = 0; trial < trials; trial++) {
      const log = join(workspace, `${name}-${trial}.log`);
      const runId = `crash-${trial}-${Math.random().toString(36).slice(2)}`;
      let plannedKills = randomInt(random, 1, 2);
      let lastKillStep = 0;
      let finished = false;
      let pending: { completed: number; before: number } | undefined;
      for (let attempt = 0; attempt < 10 && !finished; attempt++) {
        const killAt =
          plannedKills > 0 ? randomInt(random, lastKillStep + 1, Math.min(19, lastKillStep + 12)) : undefined;
        const outcome = await runChild(
          agentChild,
          [name, kind.url, namespace, log, runId],
          killAt === undefined
            ? {}
            : {
                killWhen: (stdout) => stdout.includes(`executed ${killAt}\n`),
                delayMs: randomInt(random, 0, 3),
              },
        );
        if (pending) {
          // No step the store had recorded as complete may run again.
          for (const step of effects(log).slice(pending.before))
            expect(
              step,
              `trial ${trial}: step ${step} re-ran after checkpoint ${pending.completed}`,
            ).toBeGreaterThan(pending.completed);
        }
        if (!outcome.killed) {
          expect(outcome.stdout).toContain('outcome answered steps 21');
          finished = true;
          break;
        }
        kills++;
        plannedKills--;
        lastKillStep = killAt ?? lastKillStep;
        pending = { completed: (await store.load(runId))?.step ?? 0, before: effects(log).length };
      }
      expect(finished, `trial ${trial} finished`).toBe(true);
      expect(new Set(effects(log))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => i + 1)));
    }
    expect(kills).toBeGreaterThanOrEqual(trials);
  });
});
