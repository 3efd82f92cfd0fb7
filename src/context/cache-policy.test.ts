import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { resumeAgent, runAgent } from '../loop/run-agent.js';
import type { RunState } from '../loop/run-state.js';
import type { Message, ModelRequest } from '../model/index.js';
import { fakeClock } from '../testing/fake-clock.js';
import { type ScriptStep, scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { replayTrace } from '../trace/replay.js';
import { memoryTraceSink } from '../trace/sink.js';
import { contextPolicy } from './cache-policy.js';
import { memoryTranscriptIndex } from './memory-transcript-index.js';

/** A tool whose result is `size` characters about `topic`; `fail` makes it an error (a dead end). */
const probe = defineTool({
  name: 'probe',
  description: 'Probe one thing.',
  input: z.object({ topic: z.string(), size: z.number().optional(), fail: z.boolean().optional() }),
  effect: 'read',
  execute: ({ topic, size, fail }) => {
    if (fail) throw new Error(`${topic} is not the cause`);
    return `${topic}: ${'x'.repeat(size ?? 400)}`;
  },
});

const call = (topic: string, extra: Record<string, unknown> = {}): ScriptStep => ({
  text: `checking ${topic}`,
  toolCalls: [{ name: 'probe', input: { topic, ...extra } }],
});

const textOfRequest = (request: ModelRequest) =>
  request.messages
    .flatMap((message: Message) =>
      message.content.map((block) =>
        block.type === 'text' ? block.text : block.type === 'tool_result' ? block.content : '',
      ),
    )
    .join('\n');

describe('contextPolicy', () => {
  it('admits a huge result capped, and the run answers instead of going over budget', async () => {
    const model = scriptedModel([call('logs', { size: 160_000 }), { text: 'the first error was at 00:00' }]);
    const run = await runAgent({
      model,
      input: 'When did the first error happen?',
      tools: [probe],
      maxContextTokens: 8_000,
      context: contextPolicy({ budgetTokens: 6_000 }),
      clock: fakeClock(),
    });
    expect(run.outcome.kind).toBe('answered');
    const second = model.calls[1] as ModelRequest;
    expect(textOfRequest(second)).toContain('recall({ step: 1 })');
    expect(textOfRequest(second).length).toBeLessThan(8_000);
    // The transcript keeps the whole result: nothing is lost, only not shown.
    expect(JSON.stringify(run.state.messages).length).toBeGreaterThan(160_000);
  });

  it('without a policy the same run ends over_budget (the control that fails is the one we fix)', async () => {
    const run = await runAgent({
      model: scriptedModel([call('logs', { size: 160_000 }), { text: 'x' }]),
      input: 'When?',
      tools: [probe],
      maxContextTokens: 8_000,
      clock: fakeClock(),
    });
    expect(run.outcome.kind).toBe('over_budget');
  });

  it('keeps the window near its budget over a long run, and the digest keeps every dead end', async () => {
    const turns: ScriptStep[] = [];
    for (let i = 1; i <= 60; i++) turns.push(call(`topic-${i}`, i % 10 === 3 ? { fail: true } : {}));
    turns.push({ text: 'done' });
    const model = scriptedModel(turns);
    const sink = memoryTraceSink();
    const run = await runAgent({
      model,
      input: 'Find the cause.',
      tools: [probe],
      maxSteps: 100,
      repeatLimit: false,
      context: contextPolicy({ budgetTokens: 3_000 }),
      trace: sink,
      clock: fakeClock(),
    });
    expect(run.outcome.kind).toBe('answered');
    const last = model.calls[model.calls.length - 1] as ModelRequest;
    const shown = textOfRequest(last);
    const liveCalls = JSON.stringify(last.messages.filter((message) => message.role === 'assistant'));
    for (const dead of [3, 13, 23, 33, 43, 53]) {
      // Summarized away, a dead end is a "failed" line of a digest; still live, it is the call itself.
      const summarized = shown.includes(`"topic":"topic-${dead}"}) failed`);
      const live = liveCalls.includes(`"topic":"topic-${dead}"`);
      expect(summarized || live, `dead end topic-${dead}`).toBe(true);
    }
    expect(shown).toContain('"topic":"topic-3"}) failed');
    const windows = sink.events.filter((event) => event.type === 'context-window');
    const largest = Math.max(...windows.map((event) => event.contextTokens));
    expect(largest).toBeLessThanOrEqual(3_000 + 400);
    expect(
      sink.events.some((event) => event.type === 'context-edit' && event.edit.verb === 'summarize'),
    ).toBe(true);
  });

  it('retrieval keeps step 300’s window the size of step 30’s; recall finds what left it, and misses are logged', async () => {
    const turns: ScriptStep[] = [];
    for (let i = 1; i <= 300; i++) turns.push(call(`area-${i}`, i === 7 ? { fail: true } : {}));
    // The model looks back for the approach it tried at step 7, searches for something never seen,
    // then repeats the ruled-out call.
    turns.push({ toolCalls: [{ name: 'recall', input: { query: 'area-7' } }] });
    turns.push({ toolCalls: [{ name: 'recall', input: { query: 'zebra unicorn' } }] });
    turns.push(call('area-7', { fail: true }));
    turns.push({ text: 'done' });
    const model = scriptedModel(turns, { recordCalls: true });
    const sink = memoryTraceSink();
    const run = await runAgent({
      model,
      input: 'Survey every area.',
      tools: [probe],
      maxSteps: 400,
      repeatLimit: false,
      context: contextPolicy({
        budgetTokens: 4_000,
        compaction: 'retrieve',
        retrieval: { index: () => memoryTranscriptIndex() },
      }),
      trace: sink,
      clock: fakeClock(),
    });
    expect(run.outcome.kind).toBe('answered');
    const windows = sink.events.filter((event) => event.type === 'context-window');
    const at = (step: number) => windows.find((event) => event.step === step)?.contextTokens ?? 0;
    expect(at(300)).toBeLessThanOrEqual(4_000);
    expect(at(300)).toBeLessThan(at(30) * 1.5);
    expect(windows.at(-1)?.transcriptTokens).toBeGreaterThan(8 * 4_000);
    const recalled = sink.events.find((event) => event.type === 'tool-result' && event.tool === 'recall');
    expect(recalled?.type === 'tool-result' && recalled.content).toContain('area-7');
    const misses = sink.events.flatMap((event) => (event.type === 'context-miss' ? [event.miss.kind] : []));
    expect(misses).toContain('recall_no_hit');
    expect(misses).toContain('repeated_dead_end');
  });

  it('a run’s end lets the policy go of it: the index its factory opened is closed, and a second run starts clean', async () => {
    let opened = 0;
    let closed = 0;
    const policy = contextPolicy({
      budgetTokens: 4_000,
      compaction: 'retrieve',
      retrieval: {
        index: () => {
          opened++;
          return Object.assign(memoryTranscriptIndex(), { close: () => void closed++ });
        },
      },
    });
    for (const runId of ['first', 'second']) {
      const run = await runAgent({
        model: scriptedModel([call('a'), { text: 'done' }]),
        input: 'go',
        tools: [probe],
        runId,
        context: policy,
        clock: fakeClock(),
      });
      expect(run.outcome.kind).toBe('answered');
    }
    expect([opened, closed]).toEqual([2, 2]);
  });

  it('a replay sends the same windows from the recorded edits', async () => {
    const turns: ScriptStep[] = [];
    for (let i = 1; i <= 25; i++) turns.push(call(`t${i}`, i === 4 ? { fail: true } : {}));
    turns.push({ text: 'done' });
    const model = scriptedModel(turns);
    const sink = memoryTraceSink();
    await runAgent({
      model,
      input: 'go',
      tools: [probe],
      maxSteps: 50,
      context: contextPolicy({ budgetTokens: 2_000, compaction: 'evict' }),
      trace: sink,
      clock: fakeClock(),
    });
    const replayed = await replayTrace(sink.events);
    expect(replayed.matches).toBe(true);
    const original = sink.events.filter((event) => event.type === 'context-window');
    const again = replayed.trace.filter((event) => event.type === 'context-window');
    expect(again.map((event) => event.contextTokens)).toEqual(original.map((event) => event.contextTokens));
  });

  it('a resumed run shows the window its checkpoint left, without re-applying edits', async () => {
    const store = new MemoryCheckpointStore();
    const turns: ScriptStep[] = [];
    for (let i = 1; i <= 20; i++) turns.push(call(`r${i}`));
    const first = await runAgent({
      model: scriptedModel([...turns, { throws: new Error('connection reset') }]),
      input: 'go',
      tools: [probe],
      maxSteps: 50,
      checkpoint: store,
      runId: 'ctx-resume',
      context: contextPolicy({ budgetTokens: 2_000 }),
      clock: fakeClock(),
    });
    expect(first.outcome.kind).toBe('hard_error');
    const saved = (await store.load('ctx-resume')) as RunState;
    expect(saved.contextEdits?.length).toBeGreaterThan(0);
    const model = scriptedModel([{ text: 'done' }]);
    const resumed = await resumeAgent(saved, {
      model,
      tools: [probe],
      maxSteps: 50,
      checkpoint: store,
      context: contextPolicy({ budgetTokens: 2_000 }),
      clock: fakeClock(),
    });
    expect(resumed.outcome.kind).toBe('answered');
    const request = model.calls[0] as ModelRequest;
    expect(textOfRequest(request)).toContain('reins summarized');
    expect(textOfRequest(request)).not.toContain('r1: ');
  });

  it('an edit that cannot apply ends the run hard_error from the context policy, labeled', async () => {
    const run = await runAgent({
      model: scriptedModel([call('a'), { text: 'x' }]),
      input: 'go',
      tools: [probe],
      context: {
        name: 'hostile',
        prepare: ({ step }) =>
          step === 2 ? { edits: [{ verb: 'evict', from: 0, to: 99, steps: [1, 1], text: '' }] } : undefined,
      },
      clock: fakeClock(),
    });
    expect(run.outcome).toMatchObject({ kind: 'hard_error', source: 'context_policy' });
  });
});
