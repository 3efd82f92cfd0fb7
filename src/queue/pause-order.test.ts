import { describe, expect, it } from 'vitest';
import { type CheckpointCommit, MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { TraceEvent } from '../trace/events.js';
import { agentRegistry } from './agent-definition.js';
import { executeRun } from './execute-run.js';
import { MemoryRunEventLog } from './memory-run-event-log.js';
import { MemoryRunRegistry } from './memory-run-registry.js';
import type { RunRecord } from './run-queue.js';
import { queuedRecord } from './run-stores.js';
import { scriptedStepsAgent } from './scripted-steps-agent.js';

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

/** A run that pauses before step 2's call, with every store in memory. */
async function pausingRun(events: MemoryRunEventLog) {
  const registry = new MemoryRunRegistry();
  const checkpoint = new MemoryCheckpointStore();
  await registry.create(queuedRecord('run-1', request, 0));
  const effects: number[] = [];
  const options = {
    agents: agentRegistry([
      scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ step }) => void effects.push(step) }),
    ]),
    checkpoint,
    registry,
    events,
  };
  return { registry, checkpoint, options, effects };
}

describe('a paused run: the record is parked before the trace shows the pause', () => {
  it('when the run-end with awaiting_approval reaches the log, the record already holds the pending approvals', async () => {
    // What a follower does on seeing the pause (the viewer, the serve test): read the record and
    // approve. The log's append is where a follower can first see the event.
    const seen: (RunRecord | undefined)[] = [];
    let registry: MemoryRunRegistry | undefined;
    class Watching extends MemoryRunEventLog {
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        const end = batch.find((event) => event.type === 'run-end');
        if (end?.type === 'run-end' && end.outcome.kind === 'awaiting_approval')
          seen.push(await registry?.get(runId));
        return super.append(runId, batch);
      }
    }
    const events = new Watching();
    const run = await pausingRun(events);
    registry = run.registry;
    const result = await executeRun({ runId: 'run-1', request }, run.options);
    expect(result.kind).toBe('parked');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.status).toBe('awaiting_approval');
    expect(seen[0]?.pendingApprovals?.map((pending) => pending.tool)).toEqual(['confirmed_effect']);
    const trace = await events.read('run-1', -1);
    expect(trace.at(-1)).toMatchObject({ type: 'run-end', outcome: { kind: 'awaiting_approval' } });
    expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
  });

  it('a worker that dies between parking the record and writing the run-end: the redelivered job writes it, once', async () => {
    let die = true;
    class Dying extends MemoryRunEventLog {
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        if (die && batch.some((event) => event.type === 'run-end')) throw new Error('worker died');
        return super.append(runId, batch);
      }
    }
    const events = new Dying();
    const run = await pausingRun(events);
    // The append is where the worker died: the job fails and is delivered again.
    await expect(executeRun({ runId: 'run-1', request }, run.options)).rejects.toThrow('worker died');
    expect((await run.registry.get('run-1'))?.status).toBe('awaiting_approval');
    const cut = await events.read('run-1', -1);
    expect(cut.at(-1)?.type).not.toBe('run-end');
    die = false;
    expect((await executeRun({ runId: 'run-1', request }, run.options)).kind).toBe('parked');
    expect((await executeRun({ runId: 'run-1', request }, run.options)).kind).toBe('parked');
    const trace = await events.read('run-1', -1);
    expect(trace.filter((event) => event.type === 'run-end')).toHaveLength(1);
    expect(trace.at(-1)).toMatchObject({
      type: 'run-end',
      outcome: { kind: 'awaiting_approval' },
      steps: 1,
    });
    expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
    expect(run.effects).toEqual([1]);
  });

  it('a worker whose pause lost the run (another worker committed past it) parks nothing and writes no run-end', async () => {
    const events = new MemoryRunEventLog();
    const run = await pausingRun(events);
    // Another worker took the run while this one paused (this one's lock lapsed): it opened its
    // segment in the log, then committed, so this worker's final commit is refused.
    const checkpoint = run.checkpoint;
    const commit = checkpoint.commit.bind(checkpoint);
    // @ts-expect-error: an asynchronous commit, as a durable store's is (the contract allows a promise)
    checkpoint.commit = async (write: CheckpointCommit) => {
      if (write.status === 'ended') {
        const seq = (await events.nextSeq('run-1')) ?? 0;
        await events.append('run-1', [{ v: 1, runId: 'run-1', seq, at: 0, type: 'run-start' } as TraceEvent]);
        const current = checkpoint.load('run-1');
        if (current) checkpoint.save(current);
      }
      return commit(write);
    };
    const result = await executeRun({ runId: 'run-1', request }, run.options);
    expect(result).toEqual({ kind: 'skipped', reason: 'held_elsewhere' });
    expect((await run.registry.get('run-1'))?.status).toBe('running');
    const trace = await events.read('run-1', -1);
    expect(trace.some((event) => event.type === 'run-end')).toBe(false);
    expect(trace.at(-1)?.type).toBe('run-start');
  });
});
