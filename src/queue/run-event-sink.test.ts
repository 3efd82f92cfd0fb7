import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { TraceEvent } from '../trace/events.js';
import { agentRegistry } from './agent-definition.js';
import { executeRun } from './execute-run.js';
import { MemoryRunEventLog } from './memory-run-event-log.js';
import { MemoryRunRegistry } from './memory-run-registry.js';
import { RunEventSink } from './run-event-sink.js';
import { queuedRecord, type RunEventStore } from './run-stores.js';
import { scriptedStepsAgent } from './scripted-steps-agent.js';

/** A log whose appends are recorded when called and settle only when the test says so. */
function heldLog() {
  const calls: { events: readonly TraceEvent[]; settle: (error?: Error) => void }[] = [];
  const log: RunEventStore = {
    append: (_runId, events) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ events: [...events], settle: (error) => (error ? reject(error) : resolve()) });
      }),
    nextSeq: async () => undefined,
    end: async () => {},
    read: async () => [],
    follow: async function* () {},
  };
  return { log, calls };
}

function event(seq: number, type: TraceEvent['type']): TraceEvent {
  return { v: 1, runId: 'r', seq, at: 0, type } as unknown as TraceEvent;
}

describe('RunEventSink write-behind', () => {
  it('sends a step-end append at once and returns nothing; run-end waits for every append', async () => {
    const { log, calls } = heldLog();
    const sink = new RunEventSink({ log, runId: 'r', writeBehind: true });
    expect(sink.write(event(0, 'run-start'))).toBeUndefined();
    expect(calls).toHaveLength(1);
    calls[0]?.settle();
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(sink.write(event(1, 'step-start'))).toBeUndefined();
    expect(sink.write(event(2, 'step-end'))).toBeUndefined();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.events.map((e) => e.seq)).toEqual([1, 2]);
    const ended = sink.write(event(3, 'run-end'));
    expect(ended).toBeInstanceOf(Promise);
    let settled = false;
    void ended?.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The run-end batch waits for the step-end append still in flight before it is sent.
    expect(settled).toBe(false);
    expect(calls).toHaveLength(2);
    calls[1]?.settle();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls).toHaveLength(3);
    calls[2]?.settle();
    await ended;
    expect(settled).toBe(true);
  });

  it('keeps one append in flight: a second step-end waits for the first', async () => {
    const { log, calls } = heldLog();
    const sink = new RunEventSink({ log, runId: 'r', writeBehind: true });
    expect(sink.write(event(0, 'step-end'))).toBeUndefined();
    const second = sink.write(event(1, 'step-end'));
    expect(second).toBeInstanceOf(Promise);
    expect(calls).toHaveLength(1);
    calls[0]?.settle();
    await second;
    expect(calls).toHaveLength(2);
    expect(calls[1]?.events.map((e) => e.seq)).toEqual([1]);
  });

  it('a refused append surfaces at the next write, not as an unhandled rejection', async () => {
    const { log, calls } = heldLog();
    const sink = new RunEventSink({ log, runId: 'r', writeBehind: true });
    expect(sink.write(event(0, 'step-end'))).toBeUndefined();
    calls[0]?.settle(new Error('refused: seq 0 does not continue the log at 3'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Known once its reply is in: the next event of any kind throws (the loop ends the run there).
    expect(() => sink.write(event(1, 'step-start'))).toThrow(/refused/);
    expect(() => sink.write(event(2, 'run-end'))).toThrow(/refused/);
    await expect(sink.flush()).rejects.toThrow(/refused/);
    expect(calls).toHaveLength(1);
  });

  it('without write-behind every flushing write is awaited (the log is not ordered before the checkpoint)', () => {
    const { log, calls } = heldLog();
    const sink = new RunEventSink({ log, runId: 'r' });
    expect(sink.write(event(0, 'step-end'))).toBeInstanceOf(Promise);
    expect(calls).toHaveLength(1);
  });

  it('a run whose append is refused mid-run ends hard_error (source trace) and runs no further step', async () => {
    const events = new MemoryRunEventLog();
    let appends = 0;
    const failing: RunEventStore = {
      append: async (runId, batch) => {
        appends++;
        if (appends === 3) throw new Error('refused: another worker holds the run');
        return events.append(runId, batch);
      },
      nextSeq: (runId) => events.nextSeq(runId),
      end: (runId) => events.end(runId),
      read: (runId, after, limit) => events.read(runId, after, limit),
      follow: (runId, after, signal) => events.follow(runId, after, signal),
      orderedBefore: () => true,
    };
    const effects: number[] = [];
    const registry = new MemoryRunRegistry();
    const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
    await registry.create(queuedRecord('run-1', request, 0));
    const result = await executeRun(
      { runId: 'run-1', request },
      {
        agents: agentRegistry([
          scriptedStepsAgent({ steps: 6, effect: ({ step }) => void effects.push(step) }),
        ]),
        checkpoint: new MemoryCheckpointStore(),
        registry,
        events: failing,
      },
    );
    expect(result.kind).toBe('ended');
    if (result.kind !== 'ended') return;
    expect(result.outcome).toMatchObject({ kind: 'hard_error', source: 'trace' });
    // Appends: run-start, step 1's end, step 2's end (refused): the run stops at step 3's first
    // event, before its tool call.
    expect(effects).toEqual([1, 2]);
  });

  it('the in-memory log applies an append when called, so it is ordered before any checkpoint', () => {
    expect(new MemoryRunEventLog().orderedBefore()).toBe(true);
  });
});
