import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { InProcessRunQueue } from '../../src/queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import type { TraceEvent } from '../../src/trace/events.js';

describe('review: the held run-end append fails once (a transient log error) after the park', () => {
  it('the paused run stays paused and approvable (before f47feee the failed run-end append did not end the run)', async () => {
    let failures = 1;
    class Flaky extends MemoryRunEventLog {
      override async append(runId: string, batch: readonly TraceEvent[]): Promise<void> {
        if (failures > 0 && batch.some((event) => event.type === 'run-end')) {
          failures--;
          throw new Error('connection reset');
        }
        return super.append(runId, batch);
      }
    }
    const effects: string[] = [];
    const registry = new MemoryRunRegistry();
    const queue = new InProcessRunQueue({
      agents: agentRegistry([
        scriptedStepsAgent({ steps: 4, confirmStep: 2, effect: ({ key }) => void effects.push(key) }),
      ]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events: new Flaky(),
    });
    await queue.enqueue({ agent: 'steps', input: 'go', actor: { id: 'ana' }, runId: 'f1' });
    await queue.idle();
    const record = await registry.get('f1');
    // The checkpoint holds a valid pause and the record was parked: one failed trace write must
    // not turn the run into a hard error nobody can approve.
    expect(record?.status, JSON.stringify(record?.outcome)).toBe('awaiting_approval');
    const approvalId = record?.pendingApprovals?.[0]?.approvalId as string;
    expect(await queue.submitVerdicts('f1', [{ approvalId, decision: 'approve', by: 'ana' }])).toEqual({
      ok: true,
    });
    await queue.idle();
    expect((await registry.get('f1'))?.outcome?.kind).toBe('answered');
    expect(effects).toEqual(['f1:1', 'f1:2', 'f1:3']);
  });
});
