import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contextPolicy } from '../context/cache-policy.js';
import { resumeAgent, runAgent } from '../loop/run-agent.js';
import type { RunState } from '../loop/run-state.js';
import type { ModelRequest } from '../model/model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { type ScriptStep, scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { memoryTraceSink } from '../trace/sink.js';
import { SqliteCheckpointStore } from './sqlite-checkpoint-store.js';
import { sqliteTranscriptIndex } from './sqlite-transcript-index.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-sqlite-context-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const probe = defineTool({
  name: 'probe',
  description: 'Probe one area.',
  effect: 'read',
  input: z.object({ area: z.string(), fail: z.boolean().optional() }),
  execute: ({ area, fail }) => {
    if (fail) throw new Error('no');
    return `${area}: ${'q'.repeat(700)}`;
  },
});

describe('a context policy on the durable stores', () => {
  it('a crashed run resumes in a new process-like connection with its window and its index: the same edits, nothing indexed twice', async () => {
    const checkpoints = join(dir, 'runs.db');
    const transcripts = join(dir, 'transcripts.db');
    const policy = () =>
      contextPolicy({
        budgetTokens: 2_500,
        compaction: 'retrieve',
        retrieval: { index: (runId) => sqliteTranscriptIndex(transcripts, { runId }) },
      });
    const turns: ScriptStep[] = [];
    for (let i = 1; i <= 30; i++)
      turns.push({
        toolCalls: [{ name: 'probe', input: { area: `zone-${i}`, ...(i === 4 ? { fail: true } : {}) } }],
      });
    const store = new SqliteCheckpointStore({ database: checkpoints });
    const sink = memoryTraceSink();
    const first = await runAgent({
      model: scriptedModel([...turns, { throws: new Error('connection reset') }]),
      input: 'Survey the zones.',
      tools: [probe],
      maxSteps: 80,
      checkpoint: store,
      runId: 'durable-ctx',
      context: policy(),
      trace: sink,
      clock: fakeClock(),
    });
    expect(first.outcome.kind).toBe('hard_error');
    store.close();

    const reopened = new SqliteCheckpointStore({ database: checkpoints });
    const saved = (await reopened.load('durable-ctx')) as RunState;
    const recorded = sink.events.flatMap((event) => (event.type === 'context-edit' ? [event.edit] : []));
    expect(saved.contextEdits).toEqual(recorded);
    const before = await sqliteTranscriptIndex(transcripts, { runId: 'durable-ctx' }).size();

    const model = scriptedModel([
      { toolCalls: [{ name: 'recall', input: { query: 'zone-4' } }] },
      { text: 'done' },
    ]);
    const resumed = await resumeAgent(saved, {
      model,
      tools: [probe],
      maxSteps: 80,
      checkpoint: reopened,
      context: policy(),
      clock: fakeClock(),
    });
    expect(resumed.outcome.kind).toBe('answered');
    // The window it resumed with is the one the checkpoint left: the old steps behind one marker.
    const request = model.calls[0] as ModelRequest;
    expect(JSON.stringify(request.messages)).toContain('are out of the window');
    expect(JSON.stringify(request.messages)).not.toContain('zone-2: ');
    // Re-reading the transcript on resume appends nothing twice; recall found the ruled-out zone.
    const after = await sqliteTranscriptIndex(transcripts, { runId: 'durable-ctx' }).size();
    expect(after - before).toBeLessThanOrEqual(6);
    const recalled = (resumed.state.messages.at(-2)?.content ?? []).find(
      (block) => block.type === 'tool_result',
    );
    expect(recalled?.type === 'tool_result' && recalled.content).toContain('zone-4');
    reopened.close();
  });

  it('a new run that reuses a run id indexes its own steps beside the old run’s in the same file', async () => {
    const transcripts = join(dir, 'reused.db');
    const run = async (area: string, recall: string) => {
      const model = scriptedModel([
        { toolCalls: [{ name: 'probe', input: { area } }] },
        { toolCalls: [{ name: 'probe', input: { area: 'other' } }] },
        { toolCalls: [{ name: 'recall', input: { query: recall } }] },
        { text: 'done' },
      ]);
      const result = await runAgent({
        model,
        input: 'Survey.',
        tools: [probe],
        runId: 'reused-id',
        context: contextPolicy({
          budgetTokens: 50_000,
          retrieval: { index: (runId) => sqliteTranscriptIndex(transcripts, { runId }) },
        }),
        clock: fakeClock(),
      });
      const found = result.state.messages.at(-2)?.content.find((block) => block.type === 'tool_result');
      return found?.type === 'tool_result' ? found.content : '';
    };
    expect(await run('alpha', 'alpha')).toContain('alpha');
    expect(await run('beta', 'beta')).toContain('beta');
  });
});
