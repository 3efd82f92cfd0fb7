import { describe, expect, it } from 'vitest';
import { CompactTraceEncoder } from './compact-trace-encoder.js';
import type { TraceEvent } from './events.js';
import { parseJsonlTrace } from './parse-jsonl-trace.js';

const header = (id = 'h1', extra = '') =>
  `{"encoding":"reins-compact/1","id":"${id}","v":1,"runId":"r","seq":0,"at":100${extra}}`;
const check = (step: number, actual: number) =>
  ({
    v: 1,
    runId: 'r',
    seq: step - 1,
    at: 100 + step,
    type: 'budget-check',
    step,
    phase: 'before-call',
    readings: [{ budget: 'context_tokens', limit: 10, actual, ok: true }],
    ok: true,
  }) as TraceEvent;

describe('parseJsonlTrace', () => {
  it('reads plain lines as they always were read, whatever they hold', () => {
    const text = '{"type":"run-start","v":1}\n5\nnull\n{"v":1,"runId":"r","seq":1,"at":0,"type":"run-end"}\n';
    expect(parseJsonlTrace(text).events).toEqual([
      { type: 'run-start', v: 1 },
      5,
      null,
      { v: 1, runId: 'r', seq: 1, at: 0, type: 'run-end' },
    ]);
  });

  it('reads a compact header and its lines, a plain line between them', () => {
    const text = [
      header(),
      '["h1","step-end",1,{"step":1,"costUsd":0}]',
      '{"v":1,"runId":"other","seq":0,"at":5,"type":"run-end"}',
      '["h1",0,2,"1",2]',
      '',
    ].join('\n');
    expect(parseJsonlTrace(text).events).toEqual([
      { v: 1, runId: 'r', seq: 0, at: 101, type: 'step-end', step: 1, costUsd: 0 },
      { v: 1, runId: 'other', seq: 0, at: 5, type: 'run-end' },
      { v: 1, runId: 'r', seq: 1, at: 103, type: 'step-end', step: 2, costUsd: 0 },
    ]);
  });

  it('names the line and what is wrong with it', () => {
    const bad = (lines: string[]) => () => parseJsonlTrace(`${lines.join('\n')}\n`, { source: 'run.jsonl' });
    expect(bad([header(), '["h2","step-end",0,{}]'])).toThrow(
      'run.jsonl:2: a compact event line names header "h2", which no earlier line opened',
    );
    expect(bad([header(), '["h1",3,0,"1",2]'])).toThrow(
      'run.jsonl:2: a compact event line names event type #3, which its header has not defined',
    );
    expect(bad([header(), '["h1","step-end",0,"1",2]'])).toThrow(
      'run.jsonl:2: a compact event line patches a step-end event, but none came before it',
    );
    expect(bad([header(), '["h1","step-end",0,{"step":1}]', '["h1",0,0,"11",2,3]'])).toThrow(
      "run.jsonl:3: a compact step-end event does not fit the one before it: the patch's mask has 2 digits for 1 values",
    );
    expect(bad([header(), '["h1","step-end",0,{"step":1}]', '["h1",0,0,"2",5]'])).toThrow(
      'run.jsonl:3: a compact step-end event does not fit the one before it: a patch is [mask, ...children]',
    );
    expect(bad([header(), '["h1","step-end",0,{"step":1}]', '["h1",0,0,"2",["1",5]]'])).toThrow(
      /run.jsonl:3: .*a patch needs an object or array to apply to/,
    );
    expect(bad([header(), '["h1","step-end","soon",{}]'])).toThrow(
      /run.jsonl:2: .*gives its time as a number/,
    );
    expect(bad([header(), '["h1","step-end",0,{"seq":4}]'])).toThrow(
      /run.jsonl:2: .*repeats the field "seq"/,
    );
    expect(bad(['{"encoding":"reins-compact/2","id":"h1"}'])).toThrow(
      'run.jsonl:1: unsupported trace encoding "reins-compact/2"; this reins reads "reins-compact/1"',
    );
    expect(bad([header('h1', ',"seq":"0"').replace('"seq":0,', '')])).toThrow(
      /run.jsonl:1: a header needs a seq/,
    );
    expect(bad([header(), '["h1","step-end",0,{"step":1}', '["h1",0,0,"1",2]'])).toThrow(
      'run.jsonl:2: not a JSON trace event',
    );
  });

  it('skips a compact last line cut off mid-write, and keeps its header', () => {
    const text = `${header()}\n["h1","step-end",1,{"step":1}]\n["h1",0,1,"1",`;
    expect(parseJsonlTrace(text)).toEqual({
      events: [{ v: 1, runId: 'r', seq: 0, at: 101, type: 'step-end', step: 1 }],
      truncatedTail: true,
    });
  });

  it('decodes events that share nothing: changing one leaves the others as read', () => {
    const encoder = new CompactTraceEncoder();
    const text = [check(1, 5), check(2, 5), check(3, 6)].map((event) => encoder.encode(event)).join('');
    const [first, second, third] = parseJsonlTrace(text).events as Extract<
      TraceEvent,
      { type: 'budget-check' }
    >[];
    first!.readings[0]!.actual = 99;
    first!.readings.push({ budget: 'wall_ms', limit: 1, actual: 1, ok: true });
    expect(second).toEqual(check(2, 5));
    expect(third).toEqual(check(3, 6));
    expect(second!.readings).not.toBe(first!.readings);
  });
});
