import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from '../scenarios/run-scenario.js';
import { fakeClock } from '../testing/fake-clock.js';
import { replayTrace } from '../trace/replay.js';
import { jsonlTraceSink, readJsonlTrace } from './jsonl-trace-sink.js';

const dir = mkdtempSync(join(tmpdir(), 'reins-jsonl-'));

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
});
