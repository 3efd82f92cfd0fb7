import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { resumeAgent, runAgent } from '../../src/loop/run-agent.js';
import { parseRunState, type RunState } from '../../src/loop/run-state.js';
import { fakeClock } from '../../src/testing/fake-clock.js';
import { type ScriptStep, scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolError } from '../../src/tools/tool-error.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { memoryTraceSink } from '../../src/trace/sink.js';

/** The tools every sample run uses: a read, a draft, a terminal failure and a confirm-first delete. */
export function sampleTools() {
  return [
    defineTool({
      name: 'lookup',
      description: 'Look something up.',
      effect: 'read',
      input: z.object({ key: z.string() }),
      trustedOutputFields: ['id'],
      execute: ({ key }) => ({ id: `id-${key}`, value: key.length }),
    }),
    defineTool({
      name: 'draft_email',
      description: 'Draft an email.',
      effect: 'write',
      autonomy: 'draft',
      input: z.object({ to: z.string() }),
      execute: () => 'never runs',
    }),
    defineTool({
      name: 'flaky',
      description: 'Always fails for good.',
      effect: 'read',
      input: z.object({}),
      execute: () => {
        throw new ToolError('gone', { code: 'gone', retry: 'no' });
      },
    }),
    defineTool({
      name: 'wipe',
      description: 'Delete everything.',
      effect: 'destructive',
      input: z.object({ target: z.string() }),
      execute: ({ target }) => ({ wiped: target }),
    }),
  ];
}

const call = (name: string, input: unknown, text = `calling ${name}`): ScriptStep => ({
  text,
  toolCalls: [{ name, input }],
});

export interface Samples {
  states: RunState[];
  traces: TraceEvent[][];
}

let cached: Promise<Samples> | undefined;

/** Real states and traces from a handful of runs: every field the loop writes, and a v1 fixture. */
export function samples(): Promise<Samples> {
  cached ??= make();
  return cached;
}

async function make(): Promise<Samples> {
  const states: RunState[] = [];
  const traces: TraceEvent[][] = [];
  const tools = sampleTools();
  let n = 0;
  const run = async (script: ScriptStep[], extra: Record<string, unknown> = {}) => {
    const sink = memoryTraceSink();
    const store = new MemoryCheckpointStore();
    const result = await runAgent({
      model: scriptedModel(script),
      input: 'Find key alpha, draft an email to ops, then clean up.',
      system: 'You are careful.',
      tools,
      runId: `sample-${++n}`,
      clock: fakeClock(),
      trace: sink,
      checkpoint: store,
      maxSteps: 8,
      ...extra,
    });
    states.push(JSON.parse(JSON.stringify(result.state)) as RunState);
    const stored = store.load(result.runId);
    if (stored) states.push(JSON.parse(JSON.stringify(stored)) as RunState);
    traces.push(JSON.parse(JSON.stringify(sink.events)) as TraceEvent[]);
    return { result, sink, store };
  };
  await run([
    call('lookup', { key: 'alpha' }),
    call('draft_email', { to: 'ops' }),
    call('flaky', {}),
    { text: 'All done.' },
  ]);
  const paused = await run([call('lookup', { key: 'alpha' }), call('wipe', { target: 'alpha' })]);
  await run([
    call('lookup', { key: 'a' }),
    call('lookup', { key: 'b' }),
    { throws: new Error('socket hang up') },
  ]);
  await run([call('lookup', { key: 'a' }), call('lookup', { key: 'a' }), call('lookup', { key: 'a' })], {
    repeatLimit: 3,
  });
  await run([call('lookup', { key: 'a' }), call('lookup', { key: 'b' })], { maxSteps: 2 });
  // A resumed run: its trace has two segments, its state a revision past the pause.
  if (paused.result.outcome.kind === 'awaiting_approval') {
    const request = paused.result.outcome.requests[0];
    const resumed = await resumeAgent(paused.result.state, {
      model: scriptedModel([{ text: 'Wiped.' }]),
      tools,
      clock: fakeClock(),
      trace: paused.sink,
      checkpoint: paused.store,
      approvals: request ? [{ approvalId: request.approvalId, decision: 'approve' }] : [],
    });
    states.push(JSON.parse(JSON.stringify(resumed.state)) as RunState);
    traces.push(JSON.parse(JSON.stringify(paused.sink.events)) as TraceEvent[]);
  }
  const fixture = new URL('../fixtures/run-state-v1-happy.json', import.meta.url);
  states.push(parseRunState(readFileSync(fixture, 'utf8')));
  return { states, traces };
}
