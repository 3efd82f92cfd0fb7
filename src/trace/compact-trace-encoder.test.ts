import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactTraceEncoder } from './compact-trace-encoder.js';
import type { TraceEvent } from './events.js';
import { jsonlNextSeq } from './jsonl-next-seq.js';
import { parseJsonlTrace } from './parse-jsonl-trace.js';

/** What a plain JSONL file gives back for `events`: the oracle every compact file must match. */
const plainText = (events: readonly unknown[]) =>
  events.map((event) => `${JSON.stringify(event)}\n`).join('');
const asRead = (events: readonly unknown[]) => events.map((event) => JSON.parse(JSON.stringify(event)));

// Small domains, so values and shapes repeat from one event to the next as they do in a run (and the
// deltas get exercised), with what JSON changes on the way (-0, NaN, undefined) and `__proto__` keys.
// `0` and `1` as keys: an object that an array of the same length must not be taken for.
const fieldName = fc.constantFrom('step', 'phase', 'readings', 'ok', '0', '1', '__proto__', 'constructor');
const scalar = fc.oneof(
  fc.constantFrom(0, 1, -0, 2.5, 'a', 'b', '', true, false, null, undefined, Number.NaN, Infinity),
  fc.integer({ min: -3, max: 3 }),
);
// A budget check's readings: a list of records of one shape whose figures move.
const readings = fc.array(
  fc.record({ budget: fc.constantFrom('a', 'b'), limit: fc.constant(10), actual: fc.nat(3) }),
  {
    minLength: 1,
    maxLength: 3,
  },
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fieldName, tie('value'), { maxKeys: 3 }),
    readings,
  ),
}));
const body = fc
  .tuple(fc.dictionary(fieldName, value, { maxKeys: 4 }), fc.option(readings, { freq: 2 }))
  .map(([fields, figures]) => (figures === null ? fields : { ...fields, readings: figures }));

/** One thing that happens to a file: an event of some run, written by one of two appending writers. */
const step = fc.record({
  run: fc.nat(2),
  /** Mostly the run's own writer; now and then the other one (two processes on one run). */
  writer: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat(1) }),
  // A segment's first and last events come once a segment, the others many times.
  type: fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom('run-start', 'run-end') },
    { weight: 6, arbitrary: fc.constantFrom('budget-check', 'step-end', 'tool-result') },
  ),
  body,
  /**
   * Keep the last body of this type of this run, changed in one field (the common case), or with
   * every figure deep inside moved on (a budget check's readings).
   */
  same: fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.tuple(fieldName, value) },
    { weight: 2, arbitrary: fc.constant('nudge' as const) },
  ),
  // Whole milliseconds as a clock gives them, now and then a fraction (a delta may not add back).
  atDelta: fc.oneof(
    { weight: 4, arbitrary: fc.oneof(fc.constantFrom(0, 1, 7, -3), fc.nat(1_000)) },
    { weight: 1, arbitrary: fc.oneof(fc.constant(0.1), fc.double({ noNaN: true, min: -1e3, max: 1e3 })) },
  ),
  /** Off the usual path: a seq gap, a seq or time the encoding cannot carry, another version. */
  oddity: fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('gap', 'fractional-seq', 'nan-at', 'v2', 'no-at') },
  ),
});

function eventsOf(steps: readonly (typeof step extends fc.Arbitrary<infer T> ? T : never)[]) {
  const seq = [0, 0, 0];
  const at = [1_767_225_600_000, 5, -20];
  const lastBody = new Map<string, Record<string, unknown>>();
  return steps.map((s) => {
    const runId = `run-${s.run}`;
    let bodyOf: Record<string, unknown> = s.body;
    const last = lastBody.get(`${s.run}/${s.type}`);
    if (s.same === 'nudge' && last) bodyOf = nudged(last) as Record<string, unknown>;
    else if (s.same && last) bodyOf = { ...last, [s.same[0]]: s.same[1] };
    lastBody.set(`${s.run}/${s.type}`, bodyOf);
    if (s.oddity === 'gap') seq[s.run]! += 2;
    at[s.run]! += s.atDelta;
    const event: Record<string, unknown> = {
      v: s.oddity === 'v2' ? 2 : 1,
      runId,
      seq: s.oddity === 'fractional-seq' ? (seq[s.run] as number) + 0.5 : seq[s.run],
      at: s.oddity === 'nan-at' ? Number.NaN : s.oddity === 'no-at' ? undefined : at[s.run],
      type: s.type,
    };
    seq[s.run]! += 1;
    for (const [key, item] of Object.entries(bodyOf)) {
      if (key === '__proto__') Object.defineProperty(event, key, { value: item, enumerable: true });
      else if (!(key in event)) event[key] = item;
    }
    return { event: event as unknown as TraceEvent, writer: s.writer ?? s.run % 2 };
  });
}

/** `value` with every `actual` figure in it one more. */
function nudged(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(nudged);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    copy[key] = key === 'actual' && typeof item === 'number' ? item + 1 : nudged(item);
  return copy;
}

/** Two writers appending to one file, as two processes would: their lines interleave. */
function compactText(written: readonly { event: TraceEvent; writer: number }[]) {
  let id = 0;
  const writers = [0, 1].map(
    (n) => new CompactTraceEncoder({ generateId: (prefix) => `${prefix}${n}.${id++}` }),
  );
  return written.map(({ event, writer }) => writers[writer]!.encode(event)).join('');
}

describe('the compact trace encoding', () => {
  it('reads back exactly what a plain file reads back: several runs and writers interleaved, resumes, oddities', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.array(step, { minLength: 10, maxLength: 80, size: 'max' }), (steps) => {
        const written = eventsOf(steps);
        const events = written.map(({ event }) => event);
        const text = compactText(written);
        const read = parseJsonlTrace(text);
        expect(read.truncatedTail).toBe(false);
        expect(read.events).toEqual(asRead(events));
        // Field order survives too: the decoded events print as the plain file's lines.
        expect(plainText(read.events)).toBe(plainText(asRead(events)));
        for (const runId of ['run-0', 'run-1', 'run-2'])
          expect(jsonlNextSeq(text, runId)).toBe(jsonlNextSeq(plainText(events), runId));

        for (const line of text.split('\n')) {
          if (line.startsWith('{"encoding"')) seen.add('header');
          else if (line.startsWith('{')) seen.add('plain line');
          else if (/^\["[^"]+","/.test(line)) seen.add('new type');
          else if (/^\["[^"]+",\d+,[^,]+,\{/.test(line)) seen.add('new shape');
          else if (/^\["[^"]+",\d+,[^,]+,"[01]*2/.test(line)) seen.add('nested delta');
          else if (line.startsWith('[')) seen.add('delta');
        }
      }),
      { numRuns: 200 },
    );
    expect([...seen].sort()).toEqual([
      'delta',
      'header',
      'nested delta',
      'new shape',
      'new type',
      'plain line',
    ]);
  });

  it('keeps what a delta could blur: times that do not add back, an array where an object was, `__proto__`', () => {
    const event = (seq: number, at: number, fields: Record<string, unknown>) =>
      ({ v: 1, runId: 'r', seq, at, type: 'step-end', ...fields }) as unknown as TraceEvent;
    const proto = JSON.parse('{"__proto__":{"polluted":true},"n":1}') as Record<string, unknown>;
    const long = 'the same long text';
    const events = [
      event(0, 1, { list: [{ 0: 'a', 1: long }], n: 1, gone: 'x' }),
      event(1, 2, { list: [['b', long]], n: 1, gone: 'x' }),
      // 2 + (1e-17 - 2) is 0, not 1e-17: the delta cannot carry it.
      event(2, 1e-17, { list: [['b', long]], n: -0, gone: undefined }),
      event(3, 0.1, { list: [['c', long]], n: 1, bag: proto }),
      event(4, 0.30000000000000004, { list: [['c', long]], n: Number.NaN, bag: { ...proto, n: 2 } }),
    ];
    const encoder = new CompactTraceEncoder();
    const read = parseJsonlTrace(events.map((item) => encoder.encode(item)).join('')).events;
    expect(plainText(read)).toBe(plainText(events));
    expect(read).toEqual(asRead(events));
    expect(Object.getPrototypeOf((read[4] as unknown as { bag: object }).bag)).toBe(Object.prototype);
  });

  it('a field changed deeper than patches nest reads back (the line\u2019s own mask is a level above them)', () => {
    // Found by the property above with seed -1263777007: the encoder nests a field's patch 8 deep,
    // under the line's mask over the fields; the decoder allowed 8 levels in all and refused the line.
    const pad = 'a long text that stays the same at every level';
    const deep = (value: number, levels: number): unknown =>
      levels === 0 ? { pad, value } : { pad, next: deep(value, levels - 1) };
    const event = (seq: number, value: number) =>
      ({
        v: 1,
        runId: 'r',
        seq,
        at: seq,
        type: 'budget-check',
        step: 1,
        body: deep(value, 12),
      }) as unknown as TraceEvent;
    const events = [event(0, 1), event(1, 2), event(2, 3)];
    const encoder = new CompactTraceEncoder();
    const text = events.map((item) => encoder.encode(item)).join('');
    expect(text.split('\n')[2]).toMatch(/^\["[^"]+",\d+,[^,]+,"[01]*2/);
    const read = parseJsonlTrace(text).events;
    expect(read).toEqual(asRead(events));
    expect(plainText(read)).toBe(plainText(events));
  });

  it('a last line cut off by a crash is the torn tail: the events before it read back, and resume past them', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 30 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (steps, where) => {
          const written = eventsOf(steps);
          const text = compactText(written);
          const lastLine = text.lastIndexOf('\n', text.length - 2) + 1;
          // Keep at least one character of the last line and lose at least one.
          const lost = text.length - 2 - lastLine;
          const cut = lastLine + 1 + Math.min(lost - 1, Math.floor(where * lost));
          const torn = text.slice(0, cut);
          const before = written.slice(0, -1).map(({ event }) => event);
          const read = parseJsonlTrace(torn);
          expect(read.truncatedTail).toBe(true);
          expect(read.events).toEqual(asRead(before));
          for (const runId of ['run-0', 'run-1', 'run-2'])
            expect(jsonlNextSeq(torn, runId)).toBe(jsonlNextSeq(plainText(before), runId));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('writes a run of similar steps in a fraction of the plain bytes', () => {
    const encoder = new CompactTraceEncoder();
    const events: TraceEvent[] = [];
    for (let step = 1; step <= 200; step++)
      events.push({
        v: 1,
        runId: 'run_3c3cdeeb-715e-4f09-a61f-61f740ce6235',
        seq: step - 1,
        at: 1_796_150_234_888 + step,
        type: 'budget-check',
        step,
        phase: 'before-call',
        readings: [
          { budget: 'context_tokens', limit: 1e12, actual: 140, ok: true },
          { budget: 'billed_tokens', limit: 1e12, actual: 120 * step, ok: true },
          { budget: 'wall_ms', limit: 3_600_000, actual: step, ok: true },
        ],
        ok: true,
      });
    const compact = events.map((event) => encoder.encode(event)).join('');
    expect(parseJsonlTrace(compact).events).toEqual(events);
    // 294 bytes an event plain; about 55 compact (the header's id, the time, the step, two figures).
    expect(compact.length).toBeLessThan(plainText(events).length / 4);
  });

  it('gives each header of one encoder its own id, and refuses a generator that repeats one', () => {
    const event = (runId: string): TraceEvent =>
      ({ v: 1, runId, seq: 0, at: 0, type: 'step-end' }) as unknown as TraceEvent;
    const encoder = new CompactTraceEncoder({ generateId: () => 'same' });
    encoder.encode(event('a'));
    expect(() => encoder.encode(event('b'))).toThrow(/generateId: keeps returning ids already in use/);
    expect(() => new CompactTraceEncoder({ generateId: 'h' as never })).toThrow(
      /generateId: must be a function/,
    );
  });
});
