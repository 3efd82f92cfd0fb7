import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chain } from '../pipeline/chain.js';
import { step } from '../pipeline/function-stage.js';
import { runPipeline } from '../pipeline/run-pipeline.js';
import { SqliteStageStore } from './sqlite-stage-store.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-stage-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const claim = (runId: string, expectedRevision: number) => ({
  runId,
  expectedRevision,
  revision: expectedRevision + 1,
  updatedAt: 0,
});

describe('SqliteStageStore', () => {
  it('commit is a compare-and-set on the revision across connections; a revision jump is refused', () => {
    const file = join(dir, 'cas.db');
    const a = new SqliteStageStore({ database: file });
    const b = new SqliteStageStore({ database: file });
    expect(a.commit(claim('r', 0))).toEqual({ ok: true });
    // The second connection still believes the run is new: refused, told where it is.
    expect(b.commit(claim('r', 0))).toEqual({ ok: false, currentRevision: 1 });
    expect(b.commit({ ...claim('r', 1), stage: 'p/one', output: '"x"' })).toEqual({ ok: true });
    expect(a.load('r')).toEqual({ revision: 2, outputs: { 'p/one': '"x"' } });
    expect(a.load('missing')).toBeUndefined();
    expect(() => a.commit({ ...claim('r', 2), revision: 7 })).toThrow(/does not follow/);
    expect(b.load('r')?.revision).toBe(2);
    a.close();
    b.close();
  });

  it('a pipeline that failed resumes from the file in a new store: completed stages restored, never run again', async () => {
    const file = join(dir, 'resume.db');
    const ran: string[] = [];
    let smtpDown = true;
    const pipeline = chain(
      'nightly',
      step('query', () => {
        ran.push('query');
        return ['t1', 't2'];
      }),
      step('summarize', (tickets: string[]) => {
        ran.push('summarize');
        return `${tickets.length} tickets`;
      }),
      step('send', (summary: string) => {
        ran.push('send');
        if (smtpDown) throw new Error('smtp down');
        return `sent: ${summary}`;
      }),
    );
    const first = new SqliteStageStore({ database: file });
    const failed = await runPipeline(pipeline, null, { runId: 'n1', checkpoint: first });
    expect(failed.outcome).toMatchObject({ kind: 'stage_error', stage: 'nightly/send' });
    first.close(); // the process that ran it is gone
    smtpDown = false;
    const second = new SqliteStageStore({ database: file });
    const resumed = await runPipeline(pipeline, null, { runId: 'n1', checkpoint: second });
    expect(resumed.outcome).toEqual({ kind: 'completed', output: 'sent: 2 tickets' });
    expect(resumed.restoredStages).toBe(2);
    expect(ran).toEqual(['query', 'summarize', 'send', 'send']);
    // Two resumes racing on two connections: one claims, the other is stale and runs nothing.
    const third = new SqliteStageStore({ database: file });
    const racing = await Promise.all([
      runPipeline(pipeline, null, { runId: 'n1', checkpoint: second }),
      runPipeline(pipeline, null, { runId: 'n1', checkpoint: third }),
    ]);
    expect(racing.map((result) => result.outcome.kind).sort()).toEqual(['completed', 'stale_state']);
    expect(ran).toEqual(['query', 'summarize', 'send', 'send']);
    second.close();
    third.close();
  });
});
