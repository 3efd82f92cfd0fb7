import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resumeAgent, runAgent } from '../loop/run-agent.js';
import { runScenario } from '../scenarios/run-scenario.js';
import { scenarioNames } from '../scenarios/scenarios.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { replayTrace } from '../trace/replay.js';
import { splitTrace } from '../trace/split-trace.js';
import { jsonlTraceSink, readJsonlTrace } from './jsonl-trace-sink.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-jsonl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('JSONL trace files', () => {
  it('round-trip a run and replay to the same outcome', async () => {
    const path = join(dir, 'happy.jsonl');
    const sink = jsonlTraceSink(path);
    const run = await runScenario('loops', { trace: sink, clock: fakeClock() });
    sink.close();
    const { events, truncatedTail } = readJsonlTrace(path);
    expect(truncatedTail).toBe(false);
    expect(events).toEqual(JSON.parse(JSON.stringify(run.trace)));
    expect((await replayTrace(events)).matches).toBe(true);
  });

  it('writes each completed step to disk before the next begins', async () => {
    const path = join(dir, 'steps.jsonl');
    const sink = jsonlTraceSink(path, { bufferBytes: 1 << 30 });
    await runScenario('happy', { trace: sink, clock: fakeClock() });
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(JSON.parse(lines.at(-1)!).type).toBe('run-end');
    sink.close();
  });

  it('skips a last line cut off by a crash, and names the line of any other bad one', () => {
    const path = join(dir, 'cut.jsonl');
    writeFileSync(path, '{"type":"run-start","v":1}\n');
    appendFileSync(path, '{"type":"step-st');
    expect(readJsonlTrace(path)).toEqual({ events: [{ type: 'run-start', v: 1 }], truncatedTail: true });
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, 'not json\n{"type":"run-end"}\n');
    expect(() => readJsonlTrace(broken)).toThrow(/broken.jsonl:1/);
  });

  it('refuses an encoding it does not know', () => {
    expect(() => jsonlTraceSink(join(dir, 'x.jsonl'), { encoding: 'zip' as never })).toThrow(
      /encoding: must be 'plain' or 'compact', got zip/,
    );
  });
});

const probe = defineTool({
  effect: 'read',
  name: 'probe',
  description: 'Probe one thing.',
  input: z.object({ n: z.number().int() }),
  execute: ({ n }) => ({ n, ok: true }),
});
const probing = (steps: number) =>
  scriptedModel([
    ...Array.from({ length: steps }, (_, n) => ({
      text: `probing ${n}`,
      toolCalls: [{ name: 'probe', input: { n } }],
    })),
    { text: 'done' },
  ]);

const wire = defineTool({
  effect: 'destructive',
  name: 'wire_money',
  description: 'Send money.',
  input: z.object({ amount: z.number() }),
  execute: ({ amount }) => ({ sent: amount }),
});

describe('compact JSONL trace files', () => {
  for (const name of scenarioNames)
    it(`read back as the run's events and replay (${name})`, async () => {
      const path = join(dir, `compact-${name}.jsonl`);
      const sink = jsonlTraceSink(path, { encoding: 'compact', mode: 'truncate' });
      const run = await runScenario(name, { trace: sink, clock: fakeClock() });
      sink.close();
      const { events, truncatedTail } = readJsonlTrace(path);
      expect(truncatedTail).toBe(false);
      expect(events).toEqual(JSON.parse(JSON.stringify(run.trace)));
      expect((await replayTrace(events)).matches).toBe(true);
    });

  it('hold the same events as a plain file of the same run in under a third of the bytes', async () => {
    const plain = jsonlTraceSink(join(dir, 'probe-plain.jsonl'), { mode: 'truncate' });
    const compact = jsonlTraceSink(join(dir, 'probe-compact.jsonl'), {
      mode: 'truncate',
      encoding: 'compact',
    });
    const result = await runAgent({
      model: probing(100),
      input: 'Probe everything.',
      tools: [probe],
      maxSteps: 102,
      trace: [plain, compact],
      clock: fakeClock(),
    });
    plain.close();
    compact.close();
    expect(result.outcome.kind).toBe('answered');
    expect(readJsonlTrace(compact.path).events).toEqual(readJsonlTrace(plain.path).events);
    const bytes = (path: string) => readFileSync(path).length;
    expect(bytes(compact.path)).toBeLessThan(bytes(plain.path) / 3);
  });

  it('two runs interleaved in one sink, and a resume appended by another writer: one seq per run, replayed', async () => {
    const path = join(dir, 'shared.jsonl');
    const first = jsonlTraceSink(path, { encoding: 'compact', mode: 'truncate' });
    const [paused, other] = await Promise.all([
      runAgent({
        model: scriptedModel([
          { text: 'Paying.', toolCalls: [{ name: 'wire_money', input: { amount: 120 } }] },
        ]),
        input: 'pay invoice 7',
        tools: [wire],
        runId: 'pay-7',
        trace: first,
        clock: fakeClock(),
      }),
      runAgent({
        model: probing(4),
        input: 'Probe.',
        tools: [probe],
        runId: 'probe-1',
        trace: first,
        clock: fakeClock(),
      }),
    ]);
    first.close();
    expect(paused.outcome.kind).toBe('awaiting_approval');
    expect(other.outcome.kind).toBe('answered');
    const request = paused.outcome.kind === 'awaiting_approval' ? paused.outcome.requests[0] : undefined;
    // The paused process wrote two events past its checkpoint before it died: the resume must
    // start after them, which only the file knows.
    const state = structuredClone(paused.state);
    const ended = readJsonlTrace(path).events.filter((event) => event.runId === 'pay-7').length;
    state.trace = { segment: 0, nextSeq: ended - 2 };
    for (const encoding of ['plain', 'compact'] as const) {
      const resumed = jsonlTraceSink(path, { encoding });
      expect(resumed.nextSeq('pay-7')).toBe(ended);
      resumed.close();
    }
    const second = jsonlTraceSink(path, { encoding: 'compact' });
    const result = await resumeAgent(state, {
      model: scriptedModel([{ text: 'Paid.' }]),
      tools: [wire],
      approvals: [{ approvalId: request?.approvalId as string, decision: 'approve' }],
      trace: second,
      clock: fakeClock(),
    });
    second.close();
    expect(result.outcome.kind).toBe('answered');

    const { events } = readJsonlTrace(path);
    const runs = splitTrace(events);
    expect(runs.map((run) => [run.runId, run.segments.length, run.problems])).toEqual([
      ['pay-7', 2, []],
      ['probe-1', 1, []],
    ]);
    const replay = await replayTrace(events, { runId: 'pay-7' });
    expect(replay.matches).toBe(true);
    expect(replay.outcome).toEqual({ kind: 'answered', text: 'Paid.' });
    expect((await replayTrace(events, { runId: 'probe-1' })).matches).toBe(true);
  });
});
