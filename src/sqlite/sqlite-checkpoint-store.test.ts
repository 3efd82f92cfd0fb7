import { mkdtempSync, writeFileSync } from 'node:fs';
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
});
