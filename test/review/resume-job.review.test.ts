import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { executeRun } from '../../src/queue/execute-run.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import { queuedRecord, type RunJob } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';

describe('review: a resume job delivered again', () => {
  it('a drained (or redelivered) resume job that still carries its verdicts resumes the run to its end, effects once', async () => {
    const effects: string[] = [];
    const registry = new MemoryRunRegistry();
    const events = new MemoryRunEventLog();
    const options = {
      agents: agentRegistry([
        scriptedStepsAgent({
          steps: 5,
          confirmStep: 2,
          effect: ({ key }) => void effects.push(key),
          idempotency: { store: new MemoryIdempotencyStore() },
        }),
      ]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    };
    const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
    await registry.create(queuedRecord('r', request, Date.now()));
    const first = await executeRun({ runId: 'r', request }, options);
    expect(first.kind).toBe('parked');
    const record = await registry.get('r');
    const approvalId = record?.pendingApprovals?.[0]?.approvalId as string;
    await registry.update('r', { status: 'queued' }, ['awaiting_approval']);
    const job: RunJob = { runId: 'r', request, verdicts: [{ approvalId, decision: 'approve', by: 'ana' }] };
    // The worker drains after the approved call ran and the next step's model call is about to start.
    const drain = new AbortController();
    drain.abort();
    const second = await executeRun(job, options, { drain: drain.signal });
    expect(second.kind).toBe('interrupted');
    // BullMQ hands the same job (same data, verdicts included) to another worker.
    const third = await executeRun(job, options);
    expect(third.kind).toBe('ended');
    expect((await registry.get('r'))?.outcome?.kind).toBe('answered');
    expect(effects).toEqual(['r:1', 'r:2', 'r:3', 'r:4']);
    const trace = await events.read('r', -1);
    expect(trace.map((e) => e.seq)).toEqual(trace.map((_, i) => i));
  });
  it('without an idempotency store: a drained resume job that still carries its verdicts resumes the run to its end, effects once', async () => {
    const effects: string[] = [];
    const registry = new MemoryRunRegistry();
    const events = new MemoryRunEventLog();
    const options = {
      agents: agentRegistry([
        scriptedStepsAgent({
          steps: 5,
          confirmStep: 2,
          effect: ({ key }) => void effects.push(key),
        }),
      ]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    };
    const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
    await registry.create(queuedRecord('r', request, Date.now()));
    const first = await executeRun({ runId: 'r', request }, options);
    expect(first.kind).toBe('parked');
    const record = await registry.get('r');
    const approvalId = record?.pendingApprovals?.[0]?.approvalId as string;
    await registry.update('r', { status: 'queued' }, ['awaiting_approval']);
    const job: RunJob = { runId: 'r', request, verdicts: [{ approvalId, decision: 'approve', by: 'ana' }] };
    // The worker drains after the approved call ran and the next step's model call is about to start.
    const drain = new AbortController();
    drain.abort();
    const second = await executeRun(job, options, { drain: drain.signal });
    expect(second.kind).toBe('interrupted');
    // BullMQ hands the same job (same data, verdicts included) to another worker.
    const third = await executeRun(job, options);
    expect(third.kind).toBe('ended');
    expect((await registry.get('r'))?.outcome?.kind).toBe('answered');
    expect(effects).toEqual(['r:1', 'r:2', 'r:3', 'r:4']);
    const trace = await events.read('r', -1);
    expect(trace.map((e) => e.seq)).toEqual(trace.map((_, i) => i));
  });
});
