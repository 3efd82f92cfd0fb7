import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { MemoryIdempotencyStore } from '../idempotency/memory-store.js';
import type { TraceEvent } from '../trace/events.js';
import { agentRegistry } from './agent-definition.js';
import { executeRun } from './execute-run.js';
import { InProcessRunQueue } from './in-process-run-queue.js';
import { MemoryRunEventLog } from './memory-run-event-log.js';
import { MemoryRunRegistry } from './memory-run-registry.js';
import { queuedRecord, type RunEventStore } from './run-stores.js';
import { scriptedStepsAgent } from './scripted-steps-agent.js';

function setup(options: { confirmStep?: number; concurrency?: number; steps?: number } = {}) {
  const effects: string[] = [];
  const agent = scriptedStepsAgent({
    steps: options.steps ?? 4,
    effect: ({ key }) => void effects.push(key),
    idempotency: { store: new MemoryIdempotencyStore() },
    ...(options.confirmStep === undefined ? {} : { confirmStep: options.confirmStep }),
  });
  const registry = new MemoryRunRegistry();
  const events = new MemoryRunEventLog();
  const checkpoint = new MemoryCheckpointStore();
  let id = 0;
  const queue = new InProcessRunQueue({
    agents: agentRegistry([agent]),
    checkpoint,
    registry,
    events,
    concurrency: options.concurrency ?? 4,
    generateId: (prefix) => `${prefix}_${++id}`,
  });
  return { queue, registry, events, checkpoint, effects };
}

const actor = { id: 'ana' };

function seqs(events: readonly TraceEvent[]): number[] {
  return events.map((event) => event.seq);
}

describe('InProcessRunQueue', () => {
  it('runs a queued run to its outcome, with the trace in the log and the record kept', async () => {
    const { queue, registry, events, effects } = setup();
    const queued = await queue.enqueue({ agent: 'steps', input: 'go', actor });
    expect(queued).toEqual({ ok: true, runId: 'run_1' });
    await queue.idle();
    const record = await registry.get('run_1');
    expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'answered' }, steps: 4, attempts: 1 });
    expect(record?.billedTokens).toBeGreaterThan(0);
    expect(effects).toEqual(['run_1:1', 'run_1:2', 'run_1:3']);
    const trace = await events.read('run_1', -1);
    expect(seqs(trace)).toEqual(trace.map((_, index) => index));
    expect(trace.at(-1)?.type).toBe('run-end');
  });

  it('refuses a second run with the same id', async () => {
    const { queue } = setup();
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'r' });
    expect(await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'r' })).toEqual({
      ok: false,
      reason: 'duplicate_run',
      runId: 'r',
    });
    await queue.idle();
  });

  it('runs lower priorities first', async () => {
    const { queue, effects } = setup({ concurrency: 1 });
    for (const [runId, priority] of [
      ['late', 5],
      ['early', 1],
      ['middle', 3],
    ] as const)
      await queue.enqueue({ agent: 'steps', input: 'go', actor, runId, priority });
    await queue.idle();
    const firstEffects = effects.filter((key) => key.endsWith(':1'));
    // `late` was alone when it came in and started at once; of the two that waited, 1 before 3.
    expect(firstEffects).toEqual(['late:1', 'early:1', 'middle:1']);
  });

  it('parks a run for approval, refuses stale ids, resumes once for two concurrent verdicts', async () => {
    const { queue, registry, events, effects } = setup({ confirmStep: 2 });
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'pay' });
    await queue.idle();
    const parked = await registry.get('pay');
    expect(parked?.status).toBe('awaiting_approval');
    expect(effects).toEqual(['pay:1']);
    const approvalId = parked?.pendingApprovals?.[0]?.approvalId as string;
    expect(approvalId).toBeTypeOf('string');
    expect(await queue.submitVerdicts('pay', [{ approvalId: 'call_2:stale', decision: 'approve' }])).toEqual({
      ok: false,
      reason: 'stale_approval',
      staleApprovalIds: ['call_2:stale'],
    });
    const both = await Promise.all([
      queue.submitVerdicts('pay', [{ approvalId, decision: 'approve', by: 'lead' }]),
      queue.submitVerdicts('pay', [{ approvalId, decision: 'approve', by: 'lead' }]),
    ]);
    expect(both.filter((answer) => answer.ok)).toHaveLength(1);
    await queue.idle();
    expect(await registry.get('pay')).toMatchObject({
      status: 'ended',
      outcome: { kind: 'answered' },
      attempts: 2,
    });
    expect(effects).toEqual(['pay:1', 'pay:2', 'pay:3']);
    const trace = await events.read('pay', -1);
    expect(seqs(trace)).toEqual(trace.map((_, index) => index));
    expect(trace.filter((event) => event.type === 'run-start')).toHaveLength(2);
  });

  it('cancels a queued run without running it, and a running one through its signal', async () => {
    const { queue, registry, effects } = setup({ concurrency: 1 });
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'first' });
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'second' });
    expect(await queue.cancel('second', 'ana')).toEqual({ ok: true, status: 'ended' });
    expect(await queue.cancel('first', 'ana')).toEqual({ ok: true, status: 'cancelling' });
    await queue.idle();
    expect((await registry.get('first'))?.outcome?.kind).toBe('cancelled');
    expect((await registry.get('second'))?.outcome?.kind).toBe('cancelled');
    expect(effects.filter((key) => key.startsWith('second'))).toEqual([]);
    expect(await queue.cancel('second', 'ana')).toEqual({ ok: false, reason: 'already_ended' });
    expect(await queue.cancel('nobody', 'ana')).toEqual({ ok: false, reason: 'not_found' });
  });
});

describe('executeRun', () => {
  it("continues the log's seq after events a lost worker appended past its checkpoint", async () => {
    const registry = new MemoryRunRegistry();
    const events = new MemoryRunEventLog();
    const store = new MemoryCheckpointStore();
    // The first worker "dies" at step 3: its checkpoints from then on never land, but its events
    // did reach the log (the window between a step's events and its checkpoint, widened).
    let dead = false;
    const checkpoint = {
      commit: (commit: Parameters<MemoryCheckpointStore['commit']>[0]) =>
        dead ? { ok: true as const } : store.commit(commit),
      load: (runId: string) => store.load(runId),
    };
    const effects: string[] = [];
    const agents = agentRegistry([
      scriptedStepsAgent({
        steps: 5,
        effect: ({ key }) => void effects.push(key),
        idempotency: { store: new MemoryIdempotencyStore() },
        beforeStep: (step, { attempt }) => {
          if (step === 3 && attempt === 1) dead = true;
        },
      }),
    ]);
    const request = { agent: 'steps', input: 'go', actor };
    await registry.create(queuedRecord('r', request, 0));
    await executeRun({ runId: 'r', request }, { agents, checkpoint, registry, events });
    const before = await events.read('r', -1);
    expect(store.load('r')?.step).toBe(2);
    // The job is handed out again, as BullMQ does with a stalled job.
    await registry.update('r', { status: 'queued' });
    dead = false;
    const second = await executeRun({ runId: 'r', request }, { agents, checkpoint, registry, events });
    expect(second).toMatchObject({ kind: 'ended', outcome: { kind: 'answered' } });
    const trace = await events.read('r', -1);
    expect(seqs(trace)).toEqual(trace.map((_, index) => index));
    const resumedStart = trace.find((event) => event.type === 'run-start' && event.segment === 1);
    expect(resumedStart?.seq).toBe(before.length);
    // Steps 3 and 4 ran again, but their effects were not repeated (idempotent tools).
    expect(effects).toEqual(['r:1', 'r:2', 'r:3', 'r:4']);
  });

  it('starts a resumed run where the log ends, even below the seq its checkpoint counted', async () => {
    const registry = new MemoryRunRegistry();
    const log = new MemoryRunEventLog();
    const store = new MemoryCheckpointStore();
    // Attempt 2 "dies" right after its claim: the claim's checkpoint counts the events held until
    // then (run-start, step-start), which never reach the log.
    let attempt = 0;
    let commitsLand = true;
    let eventsLand = true;
    const checkpoint = {
      commit: (commit: Parameters<MemoryCheckpointStore['commit']>[0]) =>
        commitsLand ? store.commit(commit) : { ok: true as const },
      load: (runId: string) => store.load(runId),
    };
    const events: RunEventStore = {
      append: (runId, batch) => (eventsLand ? log.append(runId, batch) : Promise.resolve()),
      read: (runId, after, limit) => log.read(runId, after, limit),
      follow: (runId, after, signal) => log.follow(runId, after, signal),
      nextSeq: (runId) => log.nextSeq(runId),
      end: (runId) => log.end(runId),
    };
    const agents = agentRegistry([
      scriptedStepsAgent({
        steps: 5,
        effect: () => {},
        beforeStep: (step, context) => {
          attempt = context.attempt;
          if (attempt === 1 && step === 3) throw new Error('first worker lost');
          if (attempt === 2) commitsLand = false;
        },
      }),
    ]);
    const request = { agent: 'steps', input: 'go', actor };
    await registry.create(queuedRecord('r', request, 0));
    await executeRun({ runId: 'r', request }, { agents, checkpoint, registry, events });
    await registry.update('r', { status: 'queued' });
    eventsLand = false;
    await executeRun({ runId: 'r', request }, { agents, checkpoint, registry, events });
    expect((store.load('r')?.trace?.nextSeq ?? 0) > ((await log.nextSeq('r')) ?? 0)).toBe(true);
    await registry.update('r', { status: 'queued' });
    commitsLand = true;
    eventsLand = true;
    const third = await executeRun({ runId: 'r', request }, { agents, checkpoint, registry, events });
    expect(third).toMatchObject({ kind: 'ended', outcome: { kind: 'answered' } });
    const trace = await log.read('r', -1);
    expect(seqs(trace)).toEqual(trace.map((_, index) => index));
  });

  it('refuses an append that does not continue the seq (another worker wrote it)', async () => {
    const events = new MemoryRunEventLog();
    const event = { v: 1, runId: 'r', seq: 0, at: 0, type: 'step-start' } as unknown as TraceEvent;
    await events.append('r', [event]);
    await expect(events.append('r', [event])).rejects.toThrow(/does not continue/);
  });

  it('follows a run live until it ends, from any seq', async () => {
    const { queue, events } = setup();
    await queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'live' });
    const seen: number[] = [];
    for await (const event of events.follow('live', 2, new AbortController().signal)) seen.push(event.seq);
    const all = await events.read('live', -1);
    expect(seen).toEqual(seqs(all).slice(3));
  });
});
