import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type CheckpointCommit,
  type CheckpointStore,
  MemoryCheckpointStore,
} from '../../checkpoint/checkpoint-store.js';
import { SqliteCheckpointStore } from '../../sqlite/sqlite-checkpoint-store.js';
import { fakeClock } from '../../testing/fake-clock.js';
import { type ScriptedTurn, scriptedModel } from '../../testing/scripted-model.js';
import { defineTool } from '../../tools/define-tool.js';
import { ToolError } from '../../tools/tool-error.js';
import type { ApprovalVerdict } from '../approval.js';
import { resumeAgent, runAgent } from '../run-agent.js';
import type { RunState } from '../run-state.js';

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** One tool for each part of the state a checkpoint carries. */
const tools = [
  // Trusted values (the ledger's facts).
  defineTool({
    name: 'lookup',
    description: 'Look a record up.',
    effect: 'read',
    input: z.object({ key: z.string() }),
    trustedOutputFields: ['id'],
    execute: ({ key }) => ({ id: `id-${key}`, note: `about ${key}` }),
  }),
  // Private values and trusted output.
  defineTool({
    name: 'profile',
    description: 'Read the user profile.',
    effect: 'read',
    input: z.object({ field: z.string() }),
    trustedOutput: true,
    privateOutput: true,
    execute: ({ field }) => ({ field, value: `secret-${field}-7731` }),
  }),
  // Untrusted results (taint).
  defineTool({
    name: 'search',
    description: 'Search the web.',
    effect: 'read',
    input: z.object({ query: z.string() }),
    execute: ({ query }) => ({ hits: [`${query} one`, `${query} two`] }),
  }),
  // Tool errors and terminal failures.
  defineTool({
    name: 'flaky',
    description: 'Fails for good.',
    effect: 'read',
    input: z.object({ n: z.number() }),
    execute: ({ n }) => {
      throw new ToolError(`gone ${n}`, { code: 'gone', retry: 'no' });
    },
  }),
  // Handoffs.
  defineTool({
    name: 'draft_email',
    description: 'Draft an email.',
    effect: 'write',
    autonomy: 'draft',
    input: z.object({ to: z.string() }),
    execute: () => 'never runs',
  }),
  // Run-wide counters (a cap), and pauses for approval under taint.
  defineTool({
    name: 'send',
    description: 'Send a message.',
    effect: 'write',
    input: z.object({ to: z.string() }),
    execute: ({ to }) => ({ sent: to }),
  }),
  // Pauses for approval (pending batches).
  defineTool({
    name: 'wipe',
    description: 'Delete a thing.',
    effect: 'destructive',
    input: z.object({ target: z.string() }),
    execute: ({ target }) => ({ wiped: target }),
  }),
];

// Reads mostly, so runs go on long enough to take snapshots; now and then a pause.
const toolName = fc.oneof(
  { arbitrary: fc.constantFrom('lookup', 'profile', 'search', 'flaky', 'draft_email'), weight: 12 },
  { arbitrary: fc.constantFrom('send', 'wipe'), weight: 1 },
);

const turn = fc.record({
  // Long texts make the deltas outweigh the snapshot sooner, so runs take several snapshots.
  text: fc.oneof(fc.string({ maxLength: 20 }), fc.string({ minLength: 500, maxLength: 1_500 })),
  // A turn without calls would be the answer.
  calls: fc.array(fc.record({ tool: toolName, arg: fc.string({ maxLength: 12 }), n: fc.nat(4) }), {
    minLength: 1,
    maxLength: 3,
  }),
});

const scenario = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 40 }),
  maxSteps: fc.integer({ min: 1, max: 45 }),
  repeatLimit: fc.constantFrom(3, 50),
  worldStates: fc.integer({ min: 1, max: 3 }),
  drift: fc.boolean(),
  /** Clock time each model call takes: with 0, the times stay as they were and deltas leave them out. */
  tickMs: fc.constantFrom(0, 7),
  /** Approve everything asked for, up to this many resumes. */
  resumes: fc.nat(3),
});

function inputOf(tool: string, arg: string, n: number): unknown {
  switch (tool) {
    case 'lookup':
      return { key: `${arg}${n}` };
    case 'profile':
      return { field: `f${n}` };
    case 'search':
      return { query: arg };
    case 'flaky':
      return { n };
    case 'wipe':
      return { target: `t${n}` };
    default:
      return { to: `user${n}@example.com` };
  }
}

function scriptOf(turns: ValueOf<typeof turn>[]): ScriptedTurn[] {
  return [
    ...turns.map((t, i) => ({
      text: t.text,
      toolCalls: t.calls.map((c, j) => ({
        name: c.tool,
        input: inputOf(c.tool, c.arg, c.n),
        id: `c${i}_${j}`,
      })),
    })),
    { text: 'done' },
  ];
}

/** A store that checks every commit's `body` is the JSON of what it carries. */
function checkingBodies(inner: CheckpointStore): CheckpointStore {
  return {
    commit(commit: CheckpointCommit) {
      const carried = commit.snapshot ?? commit.delta;
      expect(commit.body).toBeTypeOf('string');
      expect(JSON.parse(commit.body as string)).toEqual(json(carried));
      if (commit.snapshot) expect(commit.snapshot.revision).toBe(commit.revision);
      return inner.commit(commit);
    },
    load: (runId) => inner.load(runId),
  };
}

/** A store that writes the objects, as a store that ignores `body` does. */
function withoutBodies(inner: CheckpointStore): CheckpointStore {
  return {
    commit: ({ body: _body, ...commit }: CheckpointCommit) => inner.commit(commit as CheckpointCommit),
    load: (runId) => inner.load(runId),
  };
}

/** Runs a scenario on `store`: the first segment, then a resume per pause. Returns the final state. */
async function play(
  spec: ValueOf<typeof scenario>,
  store: CheckpointStore,
  runId: string,
): Promise<RunState> {
  const clock = fakeClock();
  let worldTick = 0;
  const script = scriptOf(spec.turns);
  const options = {
    tools,
    clock,
    checkpoint: store,
    maxSteps: spec.maxSteps,
    repeatLimit: spec.repeatLimit,
    maxToolErrors: 1_000,
    taint: { policies: { send: { caps: { maxCalls: 50 } } } },
    ...(spec.drift
      ? {
          drift: { window: 3, minDistinct: 1 },
          worldState: () => String(worldTick++ % spec.worldStates),
        }
      : { drift: false as const }),
  };
  let played = 0;
  const model = () =>
    scriptedModel(
      script.slice(played).map((step) => (_request: unknown, _turn: number) => {
        played++;
        clock.advance(spec.tickMs);
        return step;
      }),
      { recordCalls: false },
    );
  let result = await runAgent({ ...options, model: model(), input: 'Do the things.', runId });
  for (let i = 0; i < spec.resumes && result.outcome.kind === 'awaiting_approval'; i++) {
    const approvals: ApprovalVerdict[] = result.outcome.requests.map((request) => ({
      approvalId: request.approvalId,
      decision: 'approve',
    }));
    result = await resumeAgent(result.state, { ...options, model: model(), approvals });
  }
  return result.state;
}

describe('checkpoint writes', () => {
  it('a snapshot plus the loop’s deltas loads as the state a full snapshot holds, in every store', async () => {
    const db = new Database(':memory:');
    const sqlite = new SqliteCheckpointStore({ database: db });
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (spec) => {
        const runId = `run-${runs++}`;
        const memory = new MemoryCheckpointStore();
        const plain = new MemoryCheckpointStore();
        const final = json(await play(spec, checkingBodies(memory), runId));
        expect(memory.load(runId)).toEqual(final);
        // The same run through a store that serializes the objects, and through SQLite.
        expect(json(await play(spec, withoutBodies(plain), runId))).toEqual(final);
        expect(plain.load(runId)).toEqual(final);
        expect(json(await play(spec, sqlite, runId))).toEqual(final);
        expect(sqlite.load(runId)).toEqual(final);
      }),
      { numRuns: 100 },
    );
    sqlite.close();
    db.close();
  });

  it('after a write the store did not take, the next write is whole, so the log still loads', async () => {
    for (const failure of ['throws', 'answers garbage'] as const) {
      const inner = new MemoryCheckpointStore();
      let commits = 0;
      const store: CheckpointStore = {
        commit(commit) {
          // The claim and the first step pass; the second step's write fails; the final one passes.
          if (++commits === 3) {
            if (failure === 'throws') throw new Error('disk full');
            return { ok: 'yes' } as never;
          }
          return inner.commit(commit);
        },
        load: (runId) => inner.load(runId),
      };
      const result = await runAgent({
        model: scriptedModel([
          { text: 'one', toolCalls: [{ name: 'lookup', input: { key: 'a' } }] },
          { text: 'two', toolCalls: [{ name: 'lookup', input: { key: 'b' } }] },
          { text: 'three', toolCalls: [{ name: 'lookup', input: { key: 'c' } }] },
        ]),
        input: 'go',
        tools,
        clock: fakeClock(),
        checkpoint: store,
        runId: `fails-${failure}`,
      });
      expect(result.outcome).toMatchObject({ kind: 'hard_error', source: 'checkpoint' });
      expect(commits).toBe(4);
      expect(inner.load(result.runId)).toEqual(json(result.state));
    }
  });
});
