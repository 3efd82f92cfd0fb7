import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { agentRegistry } from './agent-definition.js';
import { executeRun } from './execute-run.js';
import { MemoryRunEventLog } from './memory-run-event-log.js';
import { MemoryRunRegistry } from './memory-run-registry.js';
import { queuedRecord } from './run-stores.js';
import { scriptedStepsAgent } from './scripted-steps-agent.js';

// Found by an adversarial review: the record and the log's end marker were written together, so a
// log that took the end first let a follower read the record's closing state as `running` or
// `cancelling`. The record is written first now.
describe('an ended run: the record before the end marker', () => {
  for (const cancelled of [false, true])
    it(`${cancelled ? 'cancelled before it ran' : 'answered'}: the record is ended when the log ends`, async () => {
      const registry = new MemoryRunRegistry();
      const events = new MemoryRunEventLog();
      const seen: (string | undefined)[] = [];
      // A registry whose writes take a while (a round trip), and a log whose end marker lands at
      // once and reads the record then, as a follower that sees the end does.
      const update = registry.update.bind(registry);
      registry.update = async (...args: Parameters<typeof registry.update>) => {
        await new Promise((resolve) => setImmediate(resolve));
        return update(...args);
      };
      const end = events.end.bind(events);
      events.end = async (runId: string) => {
        seen.push((await registry.get(runId))?.status);
        return end(runId);
      };
      const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
      await registry.create(queuedRecord('r1', request, 1));
      const cancel = new AbortController();
      if (cancelled) cancel.abort();
      const done = await executeRun(
        { runId: 'r1', request },
        {
          agents: agentRegistry([scriptedStepsAgent({ steps: 2, effect: () => {} })]),
          checkpoint: new MemoryCheckpointStore(),
          registry,
          events,
        },
        { cancel: cancel.signal },
      );
      expect(done.kind).toBe('ended');
      expect(seen).toEqual(['ended']);
    });
});
