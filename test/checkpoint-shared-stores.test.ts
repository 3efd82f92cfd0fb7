// The shared checkpoint stores (PostgreSQL, Redis) under many writers on separate connections: the
// compare-and-set against a model over random interleavings of loads, commits and races, and a
// resumed agent that a second worker tries to resume again.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CheckpointStore, CommitResult } from '../src/checkpoint/index.js';
import { resumeAgent, runAgent } from '../src/loop/run-agent.js';
import type { RunState } from '../src/loop/run-state.js';
import { PostgresCheckpointStore } from '../src/postgres/index.js';
import { RedisCheckpointStore } from '../src/redis/index.js';
import { fakeClock } from '../src/testing/fake-clock.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { defineTool } from '../src/tools/define-tool.js';
import { deltaCommit, fixtureState, json, snapshotCommit, stepOf } from './support/checkpoint-fixtures.js';
import { connectTestPostgres, postgresUrl } from './support/postgres.js';
import { connectTestRedis, redisUrl, uniquePrefix } from './support/redis.js';

const writers = 4;
let redis: Redis | undefined;
let pool: pg.Pool | undefined;
const schema = `reins_shared_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
const closers: (() => unknown)[] = [];
beforeAll(async () => {
  redis = await connectTestRedis();
  pool = await connectTestPostgres();
  if (pool) await new PostgresCheckpointStore({ pool, schema }).ensureSchema();
});
afterAll(async () => {
  for (const close of closers) await close();
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
  redis?.disconnect();
});

/** `count` stores on one table or key prefix, each on its own connection. */
type Connections = (count: number) => CheckpointStore[] | undefined;
const kinds: [string, Connections][] = [
  [
    'postgres',
    (count) => {
      if (!pool) return undefined;
      return Array.from({ length: count }, () => {
        // One connection per writer: their statements really meet in the server.
        const own = new pg.Pool({ connectionString: postgresUrl, max: 1 });
        closers.push(() => own.end());
        return new PostgresCheckpointStore({ pool: own, schema });
      });
    },
  ],
  [
    'redis',
    (count) => {
      if (!redis) return undefined;
      const keyPrefix = uniquePrefix('shared-stores');
      return Array.from({ length: count }, () => {
        const own = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
        closers.push(() => own.disconnect());
        return new RedisCheckpointStore({ redis: own, keyPrefix });
      });
    },
  ],
];

const who = fc.nat(writers - 1);
const operation = fc.oneof(
  fc.record({ kind: fc.constant('load' as const), who }),
  fc.record({ kind: fc.constant('commit' as const), who, snapshot: fc.boolean() }),
  fc.record({
    kind: fc.constant('race' as const),
    racers: fc.uniqueArray(who, { minLength: 2, maxLength: writers }),
    snapshots: fc.array(fc.boolean(), { minLength: writers, maxLength: writers }),
    // Racers that load first all start from the current revision: exactly one of them may win.
    reload: fc.boolean(),
  }),
);

describe.each(kinds)('%s: writers on separate connections', (_name, connect) => {
  it('agree with a model of compare-and-set over random interleavings of loads, commits and races', async ({
    skip,
  }) => {
    const stores = connect(writers + 1);
    if (!stores) return skip();
    const reader = stores[writers]!;
    let runs = 0;
    let contested = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 16 }), async (operations) => {
        const runId = `model-${runs++}`;
        let label = 0;
        const first = fixtureState(runId);
        expect(await reader.commit(snapshotCommit(first))).toEqual({ ok: true });
        // The model: the committed state, and what each writer last loaded.
        let current: RunState = { ...first, revision: 1 };
        const seen: RunState[] = Array.from({ length: writers }, () => current);
        const commitOf = (writer: number, snapshot: boolean) => {
          const next = stepOf(seen[writer]!, `w${writer}-${label++}`);
          return {
            next,
            commit: snapshot
              ? snapshotCommit(next, seen[writer]!.revision)
              : deltaCommit(seen[writer]!, next),
          };
        };
        for (const op of operations) {
          if (op.kind === 'load') {
            seen[op.who] = (await stores[op.who]!.load(runId))!;
            expect(json(seen[op.who])).toEqual(json(current));
          } else if (op.kind === 'commit') {
            const { next, commit } = commitOf(op.who, op.snapshot);
            const result = await stores[op.who]!.commit(commit);
            if (seen[op.who]!.revision === current.revision) {
              expect(result).toEqual({ ok: true });
              current = next;
            } else expect(result).toEqual({ ok: false, currentRevision: current.revision });
          } else {
            if (op.reload) for (const racer of op.racers) seen[racer] = (await stores[racer]!.load(runId))!;
            const before = current.revision!;
            const attempts = op.racers.map((racer) => ({ racer, ...commitOf(racer, op.snapshots[racer]!) }));
            const results: CommitResult[] = await Promise.all(
              attempts.map((attempt) => stores[attempt.racer]!.commit(attempt.commit)),
            );
            const eligible = attempts.filter((attempt) => seen[attempt.racer]!.revision === before);
            if (eligible.length > 1) contested++;
            const winners = attempts.filter((_, i) => results[i]!.ok);
            // Exactly one of those at the current revision wins; nobody else does.
            expect(winners).toHaveLength(eligible.length > 0 ? 1 : 0);
            if (winners[0]) expect(eligible).toContain(winners[0]);
            const after = winners[0] ? before + 1 : before;
            for (const [i, result] of results.entries())
              if (!result.ok)
                expect([before, after], `racer ${attempts[i]!.racer}`).toContain(result.currentRevision);
            if (winners[0]) current = winners[0].next;
          }
          expect(json(await reader.load(runId))).toEqual(json(current));
        }
      }),
      { numRuns: 40 },
    );
    // The property is about races: make sure it had some.
    expect(contested).toBeGreaterThan(10);
  });
});

const wires: number[] = [];
const wireMoney = defineTool({
  name: 'wire_money',
  description: 'Send money.',
  effect: 'destructive',
  input: z.object({ amount: z.number() }),
  execute: ({ amount }) => {
    wires.push(amount);
    return { sent: amount };
  },
});

/** A run paused for approval of a wire, checkpointed in `store`. */
async function pausedWire(store: CheckpointStore, runId: string) {
  const first = await runAgent({
    model: scriptedModel([
      { text: 'Paying the invoice.', toolCalls: [{ name: 'wire_money', input: { amount: 120 } }] },
    ]),
    input: 'pay invoice 7',
    tools: [wireMoney],
    runId,
    clock: fakeClock(),
    checkpoint: store,
  });
  expect(first.outcome.kind).toBe('awaiting_approval');
  const request = first.outcome.kind === 'awaiting_approval' ? first.outcome.requests[0] : undefined;
  return { state: first.state, approvalId: request?.approvalId as string };
}

describe.each(kinds)('%s: resuming one state twice', (_name, connect) => {
  it('the second resume of the same state ends stale_state with nothing run', async ({ skip }) => {
    const stores = connect(2);
    if (!stores) return skip();
    const [a, b] = stores as [CheckpointStore, CheckpointStore];
    wires.length = 0;
    const runId = `twice-${Math.random().toString(36).slice(2)}`;
    const { state, approvalId } = await pausedWire(a, runId);
    const model = () => scriptedModel([{ text: 'Paid.' }]);
    const resume = (store: CheckpointStore, runModel = model()) =>
      resumeAgent(structuredClone(state), {
        model: runModel,
        tools: [wireMoney],
        approvals: [{ approvalId, decision: 'approve', by: 'ops' }],
        clock: fakeClock(),
        checkpoint: store,
      });
    const first = await resume(a);
    expect(first.outcome).toEqual({ kind: 'answered', text: 'Paid.' });
    // Another worker, another connection, the same paused state.
    const secondModel = model();
    const second = await resume(b, secondModel);
    expect(second.outcome).toEqual({
      kind: 'stale_state',
      revision: state.revision,
      currentRevision: (await b.load(runId))?.revision,
    });
    expect(secondModel.calls).toHaveLength(0);
    expect(wires).toEqual([120]);
    expect(json(await b.load(runId))).toEqual(json(first.state));
  });

  it('three workers resuming the same paused run at once: one runs the wire, two are refused', async ({
    skip,
  }) => {
    const stores = connect(3);
    if (!stores) return skip();
    wires.length = 0;
    const runId = `workers-${Math.random().toString(36).slice(2)}`;
    const { approvalId } = await pausedWire(stores[0]!, runId);
    // Each worker has loaded the paused state before any of them resumes it.
    const loaded = await Promise.all(stores.map((store) => store.load(runId)));
    expect(loaded.map((state) => state?.revision)).toEqual(Array(3).fill(loaded[0]?.revision));
    const outcomes = await Promise.all(
      stores.map((store, i) =>
        resumeAgent(loaded[i]!, {
          model: scriptedModel([{ text: 'Paid.' }]),
          tools: [wireMoney],
          approvals: [{ approvalId, decision: 'approve' }],
          checkpoint: store,
        }),
      ),
    );
    const kinds = outcomes.map((result) => result.outcome.kind).sort();
    expect(kinds).toEqual(['answered', 'stale_state', 'stale_state']);
    expect(wires).toEqual([120]);
  });
});
