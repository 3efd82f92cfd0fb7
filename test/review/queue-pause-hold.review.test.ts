import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { InProcessRunQueue } from '../../src/queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import type { CancelResult, RunRecord } from '../../src/queue/run-queue.js';
import type { RunRecordPatch } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import type { TraceEvent } from '../../src/trace/events.js';

// f47feee holds a pause's run-end until the record is parked. Between the park and the held
// append, the record is `awaiting_approval` (so a person may act on it) while the log has no
// run-end yet and the executing job still holds the run. These tests act in that window: the
// hook runs when the held run-end is about to be appended.

const actor = { id: 'ana' };

function isPauseEnd(batch: readonly TraceEvent[]): boolean {
  return batch.some((event) => event.type === 'run-end' && event.outcome.kind === 'awaiting_approval');
}

/** A memory log that runs `hook` once, before the pause's run-end is appended. */
class PauseHookLog extends MemoryRunEventLog {
  hook: (() => Promise<void>) | undefined;
  override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
    const hook = this.hook;
    if (hook && isPauseEnd(batch)) {
      this.hook = undefined;
      await hook();
    }
    return super.append(runId, batch);
  }
}

/** A memory registry that keeps every patch it applied. */
class RecordingRegistry extends MemoryRunRegistry {
  readonly applied: RunRecordPatch[] = [];
  override async update(
    runId: string,
    patch: RunRecordPatch,
    from?: readonly RunRecord['status'][],
  ): Promise<RunRecord | undefined> {
    const updated = await super.update(runId, patch, from);
    if (updated) this.applied.push(patch);
    return updated;
  }
}

/** Lets the in-memory stores and the queue make progress: a bounded number of macrotask turns. */
async function turns(count: number, until: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (await until()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('review: acting on a parked run before its held run-end is written (in-process queue)', () => {
  it('a cancel that lands after the park and before the held run-end still ends the run (not stuck in cancelling)', async () => {
    const registry = new MemoryRunRegistry();
    const events = new PauseHookLog();
    const queue = new InProcessRunQueue({
      agents: agentRegistry([scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: () => {} })]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    });
    let cancelled: CancelResult | undefined;
    events.hook = async () => {
      cancelled = await queue.cancel('c1', 'ana');
    };
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'c1' });
    await queue.idle();
    expect(cancelled?.ok).toBe(true);
    // The owner was told the cancel was taken; nothing may leave the run half-cancelled.
    const record = await registry.get('c1');
    expect(record?.status).toBe('ended');
    expect(record?.outcome?.kind).toBe('cancelled');
  });

  it('an approval that lands after the park and before the held run-end: the pause keeps its run-end and the run never ends as a hard error', async () => {
    const effects: string[] = [];
    const registry = new RecordingRegistry();
    const events = new PauseHookLog();
    const queue = new InProcessRunQueue({
      agents: agentRegistry([
        scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
      ]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    });
    const approve = async () => {
      const record = await registry.get('a1');
      const approvalId = record?.pendingApprovals?.[0]?.approvalId;
      if (record?.status !== 'awaiting_approval' || !approvalId) return false;
      return (await queue.submitVerdicts('a1', [{ approvalId, decision: 'approve', by: 'ana' }])).ok;
    };
    events.hook = async () => {
      const before = (await events.nextSeq('a1')) ?? 0;
      if (!(await approve())) return;
      // The resume starts in this process and opens its segment where the log ends now.
      await turns(200, async () => ((await events.nextSeq('a1')) ?? 0) > before);
    };
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'a1' });
    await queue.idle();
    // idle() can resolve while the pausing execution is still settling (the resume's execution
    // shares its entry in the queue's map of running runs): let it finish.
    await turns(100, () => false);
    // Before f47feee the hook runs before the park (the verdict is refused): approve now.
    if ((await registry.get('a1'))?.status === 'awaiting_approval') {
      expect(await approve()).toBe(true);
      await queue.idle();
    }
    const trace = await events.read('a1', -1);
    expect(trace.map((event) => event.seq)).toEqual(trace.map((_, index) => index));
    const ends = trace.filter((event) => event.type === 'run-end');
    expect
      .soft(
        ends.map((event) => (event.type === 'run-end' ? event.outcome.kind : '')),
        'the pause segment ends with its run-end, then the resume segment ends',
      )
      .toEqual(['awaiting_approval', 'answered']);
    expect
      .soft(
        registry.applied.filter((patch) => patch.outcome?.kind === 'hard_error'),
        'no execution ended the run as a hard error',
      )
      .toEqual([]);
    const record = await registry.get('a1');
    expect(record?.status).toBe('ended');
    expect(record?.outcome?.kind).toBe('answered');
    expect(effects).toEqual(['a1:1', 'a1:2', 'a1:3']);
  });

  it('a cancel of the resume job queued behind the pausing execution (concurrency 1): nothing is appended after the log ended', async () => {
    const registry = new MemoryRunRegistry();
    const appendedAfterEnd: string[] = [];
    let endedRuns = new Set<string>();
    class Watching extends PauseHookLog {
      override async end(runId: string): Promise<void> {
        endedRuns.add(runId);
        return super.end(runId);
      }
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        const result = super.append(runId, batch);
        // Checked after the hook ran (super.append awaits it before appending).
        await result;
        if (endedRuns.has(runId)) appendedAfterEnd.push(...batch.map((event) => event.type));
      }
    }
    const events = new Watching();
    const queue = new InProcessRunQueue({
      agents: agentRegistry([scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: () => {} })]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
      concurrency: 1,
    });
    events.hook = async () => {
      const record = await registry.get('q1');
      const approvalId = record?.pendingApprovals?.[0]?.approvalId;
      if (record?.status !== 'awaiting_approval' || !approvalId) return;
      await queue.submitVerdicts('q1', [{ approvalId, decision: 'approve', by: 'ana' }]);
      // The resume job waits (concurrency 1): the cancel removes it and ends the run here.
      await queue.cancel('q1', 'ana');
    };
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'q1' });
    await queue.idle();
    endedRuns = new Set(endedRuns);
    expect(appendedAfterEnd, 'events appended after the run ended (record and end marker)').toEqual([]);
  });

  it('an approval in that window: the resume keeps its place in the queue, so a later cancel stops it rather than ending the run under it', async () => {
    const effects: string[] = [];
    const registry = new MemoryRunRegistry();
    let atStep3: Promise<void> | undefined;
    let reachedStep3 = false;
    let release: () => void = () => {};
    const endedAt: number[] = [];
    class Watching extends PauseHookLog {
      appendedAfterEnd = 0;
      override async end(runId: string): Promise<void> {
        endedAt.push((await this.nextSeq(runId)) ?? 0);
        return super.end(runId);
      }
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        await super.append(runId, batch);
        if (endedAt.length > 0) this.appendedAfterEnd += batch.length;
      }
    }
    const events = new Watching();
    const queue = new InProcessRunQueue({
      agents: agentRegistry([
        scriptedStepsAgent({
          steps: 4,
          confirmStep: 2,
          effect: ({ key }) => void effects.push(key),
          beforeStep: async (step) => {
            if (step === 3 && atStep3) {
              reachedStep3 = true;
              await atStep3;
            }
          },
        }),
      ]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    });
    const approve = async () => {
      const record = await registry.get('k1');
      const approvalId = record?.pendingApprovals?.[0]?.approvalId;
      if (record?.status !== 'awaiting_approval' || !approvalId) return false;
      return (await queue.submitVerdicts('k1', [{ approvalId, decision: 'approve', by: 'ana' }])).ok;
    };
    atStep3 = new Promise((resolve) => {
      release = resolve;
    });
    // The verdict comes the moment the record is parked (the held run-end not yet written).
    events.hook = async () => {
      await approve();
    };
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'k1' });
    // Before f47feee the hook ran before the park (the verdict was refused): approve afterwards.
    await turns(200, () => reachedStep3 || isParked(registry));
    if ((await registry.get('k1'))?.status === 'awaiting_approval') expect(await approve()).toBe(true);
    await turns(200, () => reachedStep3);
    expect(reachedStep3).toBe(true);
    // The resume is running (between steps 2 and 3). A person cancels it.
    const cancelled = await queue.cancel('k1', 'ana');
    release();
    await queue.idle();
    await turns(50, () => false);
    const record = await registry.get('k1');
    expect.soft(record?.status).toBe('ended');
    expect.soft(record?.outcome?.kind, `cancel answered ${JSON.stringify(cancelled)}`).toBe('cancelled');
    // A run answered 'ended' (or 'cancelling') does not run its next step's effect …
    expect.soft(effects, `cancel answered ${JSON.stringify(cancelled)}`).toEqual(['k1:1', 'k1:2']);
    // … and nothing reaches its trace after the log ended.
    expect.soft(events.appendedAfterEnd).toBe(0);
  });
});

function isParked(registry: MemoryRunRegistry): Promise<boolean> {
  return registry.get('k1').then((record) => record?.status === 'awaiting_approval');
}
