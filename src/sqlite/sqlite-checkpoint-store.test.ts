import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError, isReinsError } from '../errors/reins-error.js';
import { resumeAgent, runAgent } from '../loop/run-agent.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { SqliteCheckpointStore } from './sqlite-checkpoint-store.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-sqlite-'));

describe('SqliteCheckpointStore', () => {
  it('keeps the latest state per run and resumes from it in a new connection', async () => {
    const path = join(dir, 'runs.db');
    const executed: number[] = [];
    const tool = defineTool({
      effect: 'read',
      name: 't',
      description: 'x',
      input: z.object({ n: z.number() }),
      execute: ({ n }) => {
        executed.push(n);
        return n;
      },
    });
    const store = new SqliteCheckpointStore({ database: path });
    await runAgent({
      model: scriptedModel([
        { toolCalls: [{ name: 't', input: { n: 1 } }] },
        { throws: new Error('network') },
      ]),
      input: 'go',
      tools: [tool],
      checkpoint: store,
      runId: 'r1',
    });
    store.close();
    const reopened = new SqliteCheckpointStore({ database: path });
    expect(reopened.list()).toMatchObject([{ runId: 'r1', status: 'ended', step: 1 }]);
    const result = await resumeAgent(reopened.load('r1')!, {
      model: scriptedModel([{ toolCalls: [{ name: 't', input: { n: 2 } }] }, { text: 'ok' }]),
      tools: [tool],
      checkpoint: reopened,
    });
    expect(result.outcome.kind).toBe('answered');
    expect(executed).toEqual([1, 2]);
    expect(reopened.load('missing')).toBeUndefined();
    reopened.close();
  });

  it('reports a corrupt stored state as a labeled error, and a bad table name as a configuration error', () => {
    const path = join(dir, 'corrupt.db');
    const store = new SqliteCheckpointStore({ database: path });
    const db = new Database(path);
    db.prepare(
      "INSERT INTO reins_checkpoints (run_id, status, step, state, updated_at) VALUES ('bad', 'running', 1, '{not json', 0)",
    ).run();
    db.close();
    let thrown: unknown;
    try {
      store.load('bad');
    } catch (error) {
      thrown = error;
    }
    expect(isReinsError(thrown) && (thrown as { reason: string }).reason).toBe('corrupt_state');
    store.close();
    expect(() => new SqliteCheckpointStore({ database: path, table: 'x; DROP TABLE y' })).toThrow();
    try {
      new SqliteCheckpointStore({ database: path, table: 'x; DROP' });
    } catch (error) {
      expect(isConfigurationError(error)).toBe(true);
    }
    writeFileSync(join(dir, 'notadb.db'), 'hello');
    expect(() => new SqliteCheckpointStore({ database: join(dir, 'notadb.db') })).toThrow();
  });

  describe('a database file deleted or replaced while the store has it open', () => {
    const tool = (onRun: () => void) =>
      defineTool({
        effect: 'read',
        name: 't',
        description: 'x',
        input: z.object({ n: z.number() }),
        execute: ({ n }) => {
          onRun();
          return n;
        },
      });
    const removeDatabase = (path: string) => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    };
    const reasonOf = (write: () => unknown) => {
      try {
        write();
      } catch (error) {
        return isReinsError(error) ? error.reason : `not a ReinsError: ${String(error)}`;
      }
      return 'no error';
    };

    it('throws checkpoint_lost on the next commit or save instead of writing into the unlinked file', async () => {
      const path = join(dir, 'lost.db');
      const store = new SqliteCheckpointStore({ database: path });
      await runAgent({
        model: scriptedModel([{ text: 'done' }]),
        input: 'go',
        tools: [tool(() => {})],
        checkpoint: store,
        runId: 'lost',
      });
      const state = store.load('lost')!;
      const revision = state.revision ?? 0;
      const next = (expectedRevision: number) => ({
        runId: 'lost',
        expectedRevision,
        revision: expectedRevision + 1,
        status: state.status,
        step: state.step,
        updatedAt: state.updatedAt,
        snapshot: state,
      });
      expect(store.commit(next(revision))).toEqual({ ok: true });
      removeDatabase(path);
      expect(reasonOf(() => store.commit(next(revision + 1)))).toBe('checkpoint_lost');
      expect(reasonOf(() => store.save(state))).toBe('checkpoint_lost');
      expect(() => store.commit(next(revision + 1))).toThrow(/was deleted while the store had it open/);
      store.close();

      // Replaced: another file now has the path (a restore, a second process re-creating it).
      const replaced = join(dir, 'replaced.db');
      const first = new SqliteCheckpointStore({ database: replaced });
      expect(first.commit({ ...next(0), runId: 'r' })).toEqual({ ok: true });
      const other = join(dir, 'other.db');
      new SqliteCheckpointStore({ database: other }).close();
      renameSync(other, replaced);
      expect(reasonOf(() => first.commit({ ...next(1), runId: 'r' }))).toBe('checkpoint_lost');
      first.close();

      // In-memory databases have no file to lose.
      const memory = new SqliteCheckpointStore({ database: ':memory:' });
      expect(memory.commit(next(0))).toEqual({ ok: true });
      expect(memory.commit(next(1))).toEqual({ ok: true });
      memory.close();
    });

    it('a run whose checkpoint file is deleted mid-run ends hard_error from checkpoint', async () => {
      const path = join(dir, 'midrun.db');
      const store = new SqliteCheckpointStore({ database: path });
      const executed: string[] = [];
      const result = await runAgent({
        model: scriptedModel([
          { toolCalls: [{ name: 't', input: { n: 1 } }] },
          { toolCalls: [{ name: 't', input: { n: 2 } }] },
          { text: 'ok' },
        ]),
        input: 'go',
        tools: [
          tool(() => {
            executed.push('run');
            removeDatabase(path);
          }),
        ],
        checkpoint: store,
        runId: 'midrun',
      });
      expect(result.outcome).toMatchObject({
        kind: 'hard_error',
        source: 'checkpoint',
        error: { name: 'ReinsError', message: expect.stringMatching(/midrun\.db was deleted/) },
      });
      // The step whose checkpoint could not be kept is the last one that ran.
      expect(executed).toEqual(['run']);
      store.close();
    });
  });
});
