import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { executeRun } from '../../src/queue/execute-run.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import type { RunRecord } from '../../src/queue/run-queue.js';
import { queuedRecord, type RunRecordPatch } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import type { TraceEvent } from '../../src/trace/events.js';

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

function gate() {
  let open: () => void = () => {};
  let reached = false;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    open,
    get reached() {
      return reached;
    },
    wait: () => {
      reached = true;
      return opened;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('the scenario did not reach its step');
}

describe('review: the redelivered pause writes its missing run-end (endTraceAtPause)', () => {
  it('not into the segment of a resume that a verdict started meanwhile (the approved run then ends as a hard error)', async () => {
    let die = true;
    const parkGate = gate();
    const resumeGate = gate();
    let holdPark = false;
    class Log extends MemoryRunEventLog {
      runStarts = 0;
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        // The pausing worker dies at its held append (after the park): f47feee's crash window.
        if (die && batch.some((event) => event.type === 'run-end')) throw new Error('worker died');
        await super.append(runId, batch);
        if (batch.some((event) => event.type === 'run-start') && ++this.runStarts === 2)
          await resumeGate.wait();
      }
    }
    class Registry extends MemoryRunRegistry {
      override async update(runId: string, patch: RunRecordPatch, from?: readonly RunRecord['status'][]) {
        if (holdPark && patch.status === 'awaiting_approval') {
          holdPark = false;
          await parkGate.wait();
        }
        return super.update(runId, patch, from);
      }
    }
    const events = new Log();
    const registry = new Registry();
    const checkpoint = new MemoryCheckpointStore();
    await registry.create(queuedRecord('r1', request, 0));
    const effects: string[] = [];
    const options = {
      agents: agentRegistry([
        scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
      ]),
      checkpoint,
      registry,
      events,
    };
    await expect(executeRun({ runId: 'r1', request }, options)).rejects.toThrow('worker died');
    die = false;
    const paused = await registry.get('r1');
    expect(paused?.status).toBe('awaiting_approval');
    expect((await events.read('r1', -1)).at(-1)?.type).not.toBe('run-end');
    const approvalId = paused?.pendingApprovals?.[0]?.approvalId as string;
    // A person approves (what submitVerdicts does): the record is queued, a resume job is added.
    await registry.update('r1', { status: 'queued' }, ['awaiting_approval']);
    // The dead worker's pause job is redelivered (BullMQ's stalled-job check) and loads the
    // checkpoint (still the pause); its park takes a round trip …
    holdPark = true;
    const redelivered = executeRun({ runId: 'r1', request }, options);
    await until(() => parkGate.reached);
    // … while the resume job starts and opens its segment.
    const resume = executeRun(
      { runId: 'r1', request, verdicts: [{ approvalId, decision: 'approve', by: 'ana' }] },
      options,
    );
    await until(() => resumeGate.reached);
    parkGate.open();
    const again = await redelivered;
    resumeGate.open();
    const resumed = await resume;
    const trace = await events.read('r1', -1);
    const types = trace.map((event) =>
      event.type === 'run-end' ? `run-end:${event.outcome.kind}` : event.type,
    );
    const resumeStart = types.lastIndexOf('run-start');
    // The pause's run-end, if the repair writes it, comes before the resume's run-start.
    expect
      .soft(types.slice(resumeStart), `redelivered: ${JSON.stringify(again)}`)
      .not.toContain('run-end:awaiting_approval');
    // The approved run finishes.
    expect.soft(resumed.kind === 'ended' ? resumed.outcome.kind : resumed.kind).toBe('answered');
    expect.soft(effects).toEqual(['r1:1', 'r1:2', 'r1:3']);
  });
});
