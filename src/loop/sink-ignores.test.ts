import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { TraceEvent } from '../trace/events.js';
import { memoryTraceSink, type TraceSink } from '../trace/sink.js';
import type { ToolExecutionInfo, ToolExecutionWrapper } from './options.js';
import { resumeAgent, runAgent } from './run-agent.js';
import type { RunState } from './run-state.js';

const record = (executed: number[]) =>
  defineTool({
    name: 'record',
    description: 'Records a step.',
    effect: 'read',
    input: z.object({ step: z.number() }),
    execute: ({ step }) => {
      executed.push(step);
      return 'ok';
    },
  });
const turn = (step: number) => ({ text: `step ${step}`, toolCalls: [{ name: 'record', input: { step } }] });

/** A sink that logs what it is written and when it is asked whether it ignores the run. */
function probe(answer: (runStart: TraceEvent) => boolean, options: { async?: boolean } = {}) {
  const log: string[] = [];
  let flushed = 0;
  const sink: TraceSink = {
    write: (event) => {
      log.push(event.type);
      return options.async ? Promise.resolve() : undefined;
    },
    flush: () => {
      flushed++;
    },
    ignores: (runStart) => {
      log.push(`ignores?${runStart.type}`);
      return answer(runStart);
    },
  };
  return { sink, log, flushed: () => flushed };
}

const withoutIgnoreChecks = (log: string[]) => log.filter((entry) => !entry.startsWith('ignores?'));

describe('a trace sink that ignores a run', () => {
  it('is written the run-start, asked then, and written nothing more; flushed at the end; the other sinks get everything', async () => {
    const executed: number[] = [];
    const ignoring = probe(() => true);
    const full = memoryTraceSink();
    const alone = memoryTraceSink();
    const options = {
      input: 'go',
      tools: [record(executed)],
      maxSteps: 10,
      clock: fakeClock(),
      runId: 'r1',
    };
    const run = await runAgent({
      ...options,
      model: scriptedModel([turn(1), turn(2), { text: 'done' }]),
      trace: [ignoring.sink, full],
    });
    expect(run.outcome.kind).toBe('answered');
    expect(ignoring.log).toEqual(['run-start', 'ignores?run-start']);
    expect(ignoring.flushed()).toBe(1);
    await runAgent({
      ...options,
      clock: fakeClock(),
      model: scriptedModel([turn(1), turn(2), { text: 'done' }]),
      trace: alone,
    });
    // The same trace as a run with no ignoring sink beside it.
    expect(full.events).toEqual(alone.events);
  });

  it('a sink that answers false, or throws, keeps getting every event', async () => {
    const no = probe(() => false);
    const broken = probe(() => {
      throw new Error('cannot say');
    });
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      trace: [no.sink, broken.sink],
    });
    expect(run.outcome.kind).toBe('answered');
    for (const { log } of [no, broken]) {
      expect(withoutIgnoreChecks(log).at(-1)).toBe('run-end');
      expect(log.filter((entry) => entry === 'ignores?run-start')).toHaveLength(1);
    }
  });

  it('with a checkpoint store (events held until the run is claimed) it is asked after the held run-start is written', async () => {
    const ignoring = probe(() => true, { async: true });
    const store = new MemoryCheckpointStore();
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      checkpoint: store,
      runId: 'held',
      trace: ignoring.sink,
    });
    expect(run.outcome.kind).toBe('answered');
    expect(ignoring.log).toEqual(['run-start', 'ignores?run-start']);
  });

  it('a resumed segment asks again: ignored in the first segment, followed in the second', async () => {
    const executed: number[] = [];
    const store = new MemoryCheckpointStore();
    let segment = 0;
    const sometimes = probe(() => segment++ === 0);
    const first = await runAgent({
      model: scriptedModel([turn(1), { throws: new Error('connection reset') }]),
      input: 'go',
      tools: [record(executed)],
      checkpoint: store,
      runId: 'seg',
      trace: sometimes.sink,
    });
    expect(first.outcome.kind).toBe('hard_error');
    expect(sometimes.log).toEqual(['run-start', 'ignores?run-start']);
    const second = await resumeAgent(store.load('seg') as RunState, {
      model: scriptedModel([turn(2), { text: 'done' }]),
      tools: [record(executed)],
      checkpoint: store,
      trace: sometimes.sink,
    });
    expect(second.outcome.kind).toBe('answered');
    const resumed = withoutIgnoreChecks(sometimes.log.slice(2));
    expect(resumed[0]).toBe('run-start');
    expect(resumed.at(-1)).toBe('run-end');
    expect(executed).toEqual([1, 2]);
  });

  it('property: whatever the sinks answer (sync or async writes), each following sink gets the whole trace and each ignoring one its run-start', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ answer: fc.constantFrom('yes', 'no', 'throws', 'none'), async: fc.boolean() }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.integer({ min: 0, max: 4 }),
        async (specs, steps) => {
          const reference = memoryTraceSink();
          const probes = specs.map((spec) => {
            const logged = probe(
              () => {
                if (spec.answer === 'throws') throw new Error('no answer');
                return spec.answer === 'yes';
              },
              { async: spec.async },
            );
            if (spec.answer === 'none') delete (logged.sink as { ignores?: unknown }).ignores;
            return logged;
          });
          const script = [...Array.from({ length: steps }, (_, index) => turn(index + 1)), { text: 'done' }];
          const run = await runAgent({
            model: scriptedModel(script),
            input: 'go',
            tools: [record([])],
            clock: fakeClock(),
            trace: [...probes.map(({ sink }) => sink), reference],
          });
          expect(run.outcome.kind).toBe('answered');
          const types = reference.events.map((event) => event.type);
          probes.forEach(({ log, flushed }, index) => {
            expect(withoutIgnoreChecks(log)).toEqual(specs[index]?.answer === 'yes' ? ['run-start'] : types);
            expect(flushed()).toBe(1);
          });
        },
      ),
      { numRuns: 60, seed: 0x16e },
    );
  });
});

describe('a tool wrapper that ignores a run', () => {
  const wrapper = (ignores: ((runId: string) => boolean) | undefined) => {
    const seen: string[] = [];
    const asked: string[] = [];
    const wrap = (execute: () => unknown, call: ToolExecutionInfo) => {
      seen.push(call.callId);
      return execute();
    };
    const wrapToolExecution: ToolExecutionWrapper = ignores
      ? Object.assign(wrap, {
          ignores: (runId: string) => {
            asked.push(runId);
            return ignores(runId);
          },
        })
      : wrap;
    return { wrapToolExecution, seen, asked };
  };

  it('true: the run’s tools are called directly; false, throwing or absent: every call is wrapped', async () => {
    for (const [answer, wrapped] of [
      [() => true, 0],
      [() => false, 2],
      [
        () => {
          throw new Error('cannot say');
        },
        2,
      ],
      [undefined, 2],
    ] as const) {
      const executed: number[] = [];
      const { wrapToolExecution, seen, asked } = wrapper(answer);
      const run = await runAgent({
        model: scriptedModel([turn(1), turn(2), { text: 'done' }]),
        input: 'go',
        tools: [record(executed)],
        runId: 'w',
        trace: memoryTraceSink(),
        wrapToolExecution,
      });
      expect(run.outcome.kind).toBe('answered');
      expect(executed).toEqual([1, 2]);
      expect(seen).toHaveLength(wrapped);
      if (answer) expect(asked).toEqual(['w']);
    }
  });

  it('is asked once the run-start is written, also when a checkpoint store holds it until the claim', async () => {
    const order: string[] = [];
    const sink: TraceSink = { write: (event) => void order.push(event.type) };
    const wrapToolExecution: ToolExecutionWrapper = Object.assign(
      (execute: () => unknown) => {
        order.push('wrapped');
        return execute();
      },
      {
        ignores: () => {
          order.push('asked');
          return false;
        },
      },
    );
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      checkpoint: new MemoryCheckpointStore(),
      trace: sink,
      wrapToolExecution,
    });
    expect(run.outcome.kind).toBe('answered');
    expect(order.slice(0, 2)).toEqual(['run-start', 'asked']);
    expect(order).toContain('wrapped');
  });

  it('a run with no trace sink never asks, and wraps every call', async () => {
    const { wrapToolExecution, seen, asked } = wrapper(() => true);
    const run = await runAgent({
      model: scriptedModel([turn(1), { text: 'done' }]),
      input: 'go',
      tools: [record([])],
      wrapToolExecution,
    });
    expect(run.outcome.kind).toBe('answered');
    expect(asked).toEqual([]);
    expect(seen).toHaveLength(1);
  });
});

describe('a sink that fails mid-run', () => {
  it('ends the run hard_error; the other sinks still get run-end (those after it miss the event it failed on); it gets nothing more', async () => {
    for (const failure of ['throws', 'rejects'] as const) {
      const before = memoryTraceSink();
      const after = memoryTraceSink();
      let failedAt: number | undefined;
      const failingWrites: string[] = [];
      const failing: TraceSink = {
        write: (event) => {
          failingWrites.push(event.type);
          if (event.type !== 'tool-result') return undefined;
          failedAt = event.seq;
          if (failure === 'throws') throw new Error('disk full');
          return Promise.reject(new Error('disk full'));
        },
      };
      const run = await runAgent({
        model: scriptedModel([turn(1), turn(2), { text: 'done' }]),
        input: 'go',
        tools: [record([])],
        clock: fakeClock(),
        trace: [before, failing, after],
      });
      expect(run.outcome).toMatchObject({ kind: 'hard_error', source: 'trace' });
      expect(failingWrites.at(-1)).toBe('tool-result');
      for (const sink of [before, after]) {
        const end = sink.events.at(-1);
        expect(end?.type).toBe('run-end');
        expect(end?.type === 'run-end' && end.outcome).toMatchObject({ kind: 'hard_error', source: 'trace' });
        expect(end?.seq).toBe((failedAt as number) + 1);
      }
      // The sink before the failed one has every seq; the one after misses only the failed event.
      expect(before.events.map((event) => event.seq)).toEqual(before.events.map((_, index) => index));
      expect(after.events.map((event) => event.seq)).not.toContain(failedAt);
      expect(after.events).toHaveLength(before.events.length - 1);
    }
  });

  it('a resume refused at its claim still leaves no trace at all', async () => {
    const store = new MemoryCheckpointStore();
    const first = await runAgent({
      model: scriptedModel([turn(1), { throws: new Error('connection reset') }]),
      input: 'go',
      tools: [record([])],
      checkpoint: store,
      runId: 'claimed',
    });
    expect(first.outcome.kind).toBe('hard_error');
    const state = store.load('claimed') as RunState;
    // Another worker resumes first and moves the checkpoint on: this resume's claim is refused.
    await resumeAgent(state, {
      model: scriptedModel([turn(2), { text: 'done' }]),
      tools: [record([])],
      checkpoint: store,
    });
    const late = memoryTraceSink();
    const refused = await resumeAgent(state, {
      model: scriptedModel([turn(2), { text: 'done' }]),
      tools: [record([])],
      checkpoint: store,
      trace: late,
    });
    expect(refused.outcome.kind).toBe('stale_state');
    expect(late.events).toEqual([]);
  });
});
