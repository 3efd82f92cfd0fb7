import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { executeRun } from '../../src/queue/execute-run.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import { queuedRecord } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import type { TraceEvent } from '../../src/trace/events.js';

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

// Any queue (BullMQ's workers too): between the park and the held run-end, the record is
// `awaiting_approval` and a verdict is accepted; the resume job's worker asks the log where to go
// on before the held run-end lands, then its run-start is refused.
describe('review: a verdict accepted between the park and the held run-end (executeRun, any queue)', () => {
  it('the approved run finishes instead of ending as a hard error (its run-start refused by the held run-end)', async () => {
    let releasePause: () => void = () => {};
    const pauseGate = new Promise<void>((resolve) => {
      releasePause = resolve;
    });
    let pauseAppended: () => void = () => {};
    const pauseDone = new Promise<void>((resolve) => {
      pauseAppended = resolve;
    });
    let holding = false;
    let armed = false;
    class Log extends MemoryRunEventLog {
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        if (batch.some((event) => event.type === 'run-end' && event.outcome.kind === 'awaiting_approval')) {
          holding = true;
          await pauseGate;
          try {
            return await super.append(runId, batch);
          } finally {
            pauseAppended();
          }
        }
        return super.append(runId, batch);
      }
      override async nextSeq(runId: string): Promise<number | undefined> {
        const next = await super.nextSeq(runId);
        if (armed) {
          // The resume has read where the log ends; the pausing worker's held append lands now.
          armed = false;
          releasePause();
          await pauseDone;
        }
        return next;
      }
    }
    const events = new Log();
    const registry = new MemoryRunRegistry();
    await registry.create(queuedRecord('v1', request, 0));
    const effects: string[] = [];
    const options = {
      agents: agentRegistry([
        scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
      ]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    };
    const pause = executeRun({ runId: 'v1', request }, options);
    for (let i = 0; i < 500 && !holding; i++) await new Promise((resolve) => setImmediate(resolve));
    const paused = await registry.get('v1');
    if (!holding || paused?.status !== 'awaiting_approval') {
      // Before f47feee the run-end reaches the log before the park: no window.
      releasePause();
      expect((await pause).kind).toBe('parked');
    }
    const record = await registry.get('v1');
    expect(record?.status).toBe('awaiting_approval');
    const approvalId = record?.pendingApprovals?.[0]?.approvalId as string;
    // submitVerdicts: the compare-and-set from awaiting_approval, then the resume job.
    expect(await registry.update('v1', { status: 'queued' }, ['awaiting_approval'])).toBeDefined();
    armed = holding;
    const resumed = await executeRun(
      { runId: 'v1', request, verdicts: [{ approvalId, decision: 'approve', by: 'ana' }] },
      options,
    );
    releasePause();
    const paused2 = await pause.catch((error: unknown) => ({ kind: 'threw', error: String(error) }));
    expect
      .soft(
        resumed.kind === 'ended' ? resumed.outcome : resumed,
        `the pausing job: ${JSON.stringify(paused2)}`,
      )
      .toMatchObject({ kind: 'answered' });
    expect.soft(effects).toEqual(['v1:1', 'v1:2', 'v1:3']);
    expect.soft((await registry.get('v1'))?.outcome?.kind).toBe('answered');
  });
});
