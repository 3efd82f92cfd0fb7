import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../src/loop/run-agent.js';
import { chain, MemoryStageStore, modelStage, runPipeline, step } from '../src/pipeline/index.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { memoryTraceSink } from '../src/trace/sink.js';

const cli = new URL('../dist/cli/reins.js', import.meta.url).pathname;
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env['FORCE_COLOR'];
const reins = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });

/** A resumed pipeline whose middle stage runs a sub-agent, written to one JSONL file. */
async function pipelineTrace(): Promise<string> {
  const sink = memoryTraceSink();
  const store = new MemoryStageStore();
  let smtpUp = false;
  const pipeline = chain(
    'nightly',
    modelStage({
      name: 'classify',
      model: scriptedModel([{ toolCalls: [{ name: 'classify', input: { category: 'bug' } }] }]),
      output: z.object({ category: z.string() }),
      prompt: (ticket: string) => ticket,
      maxOutputTokens: 32,
    }),
    step('research', async ({ category }: { category: string }, context) => {
      const result = await runAgent({
        model: scriptedModel([{ text: `notes on ${category}` }]),
        input: category,
        runId: `${context.runId}.research`,
        trace: sink,
      });
      return result.outcome.kind === 'answered' ? result.outcome.text : '';
    }),
    step('send', (notes: string) => {
      if (!smtpUp) throw new Error('smtp down');
      return `sent: ${notes}`;
    }),
  );
  await runPipeline(pipeline, 'export drops a row', { runId: 'nightly-1', checkpoint: store, trace: sink });
  smtpUp = true;
  await runPipeline(pipeline, 'export drops a row', { runId: 'nightly-1', checkpoint: store, trace: sink });
  const dir = mkdtempSync(join(tmpdir(), 'reins-pipeline-cli-'));
  const file = join(dir, 'nightly.jsonl');
  writeFileSync(file, `${sink.events.map((event) => JSON.stringify(event)).join('\n')}\n`);
  return file;
}

describe('reins trace on a pipeline trace', () => {
  it('show renders stages and the outcome; replay checks the pipeline and replays its sub-agent', async () => {
    const file = await pipelineTrace();
    const show = reins('trace', 'show', file);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('pipeline nightly');
    expect(show.stdout).toContain('stage nightly/classify: restored, not run again');
    expect(show.stdout).toContain('outcome completed');
    const replay = reins('trace', 'replay', file, '--json');
    expect(replay.status).toBe(0);
    const parsed = JSON.parse(replay.stdout) as {
      matches: boolean;
      runs: { runId: string; matches: boolean }[];
      pipelines: { runId: string; matches: boolean; segments: number }[];
    };
    expect(parsed.matches).toBe(true);
    expect(parsed.pipelines).toMatchObject([{ runId: 'nightly-1', matches: true, segments: 2 }]);
    expect(parsed.runs).toMatchObject([{ runId: 'nightly-1.research', matches: true }]);
    expect(reins('trace', 'replay', file).stdout).toContain('reproduced: 2 segment(s)');
  });
});
