import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../src/trace/events.js';
import { connectTestPostgres } from '../support/postgres.js';
import { actor, fleet, seqs, sleep } from './pgboss-review-support.js';

// pg-boss 10 races each handler against the job's expireInSeconds (manager.js resolveWithinSeconds):
// when it elapses the job is failed and retried at once (retryDelay 0), while the handler, and so
// the run, goes on. docs/queue.md says a still-going run is "started again elsewhere" at "pg-boss's
// next maintenance" and "the checkpoint's compare-and-set stops one of the two at its next commit".
// What happens: the same worker picks the retried job up within a poll (not at maintenance), and
// again at each expiry up to retryLimit, while every earlier execution goes on. A step that outlives
// expireInSeconds is run once per redelivery (11 times with the defaults), and on one worker the
// executions share one `cancels` entry, so a cancel can miss the execution that still runs.

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')(
  'review: pg-boss job expiry while the run still runs',
  () => {
    it('held: a run whose steps are shorter than expireInSeconds but which outlives it ends once, answered; the superseded executions stop (held_elsewhere); a follower sees the whole trace', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      const executions: string[] = [];
      const f = await fleet({
        agent: { steps: 4, beforeStep: () => sleep(700) },
        queue: { expireInSeconds: 1 },
        worker: {
          pollingIntervalSeconds: 0.5,
          onExecuted: (_job, result) =>
            void executions.push(result.kind === 'ended' ? `ended:${result.outcome.kind}` : result.kind),
        },
      });
      try {
        const outcomes: string[] = [];
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            const record = await f.queue.registry.get('long');
            if (record?.status === 'ended') {
              const kind = record.outcome?.kind as string;
              if (outcomes.at(-1) !== kind) outcomes.push(kind);
            }
            await sleep(10);
          }
        })();
        const seen: TraceEvent[] = [];
        const following = (async () => {
          for await (const event of f.queue.events.follow('long', -1, AbortSignal.timeout(30_000)))
            seen.push(event);
        })();
        await sleep(50);
        await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'long' });
        await following;
        // Let every execution of the run finish.
        for (let i = 0; i < 200 && f.started.some((w) => w.running > 0); i++) await sleep(50);
        await sleep(500);
        sampling = false;
        await sampler;
        const trace = await f.queue.events.read('long', -1);
        const record = await f.queue.registry.get('long');
        // Every step's effect once (the tool is idempotent): this part holds.
        expect(f.effects).toEqual(['long:1', 'long:2', 'long:3']);
        expect(executions.filter((kind) => kind !== 'skipped')).toEqual(['ended:answered']);
        expect({ outcomes, final: record?.outcome?.kind }).toEqual({
          outcomes: ['answered'],
          final: 'answered',
        });
        expect(seqs(seen)).toEqual(seqs(trace));
      } finally {
        await f.close();
      }
    });

    it('fixed: two executions of one run on a worker each have their own cancel entry: when one stops, a cancel still reaches the other', {
      timeout: 60_000,
    }, async ({ skip }) => {
      if (!pool) return skip();
      let release: (() => void) | undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let releaseSecond: (() => void) | undefined;
      const second = new Promise<void>((resolve) => {
        releaseSecond = resolve;
      });
      const executions: string[] = [];
      const f = await fleet({
        agent: {
          steps: 4,
          // The first execution waits in step 2; the second takes the run over and waits in step 3.
          beforeStep: (step, { attempt }) =>
            attempt === 1 && step === 2 ? gate : attempt === 2 && step === 3 ? second : undefined,
        },
        worker: {
          concurrency: 2,
          pollingIntervalSeconds: 0.5,
          onExecuted: (_job, result) => void executions.push(result.kind),
        },
      });
      try {
        await f.queue.enqueue({ agent: 'steps', input: 'go', actor, runId: 'twice' });
        for (let i = 0; i < 200 && !f.effects.includes('twice:1'); i++) await sleep(20);
        // A second job for the run (what an expired job's redelivery is): a second execution here,
        // which finds the run held by the first (its checkpoint moved on) and stops.
        await f.queue.boss.send(f.queue.queueName, {
          runId: 'twice',
          request: { agent: 'steps', input: 'go', actor },
        });
        for (let i = 0; i < 200 && !f.effects.includes('twice:2'); i++) await sleep(20);
        // The first goes on, finds the run held by the second (its commit is refused) and stops.
        release?.();
        for (let i = 0; i < 200 && executions.length === 0; i++) await sleep(20);
        expect(executions).toEqual(['skipped']);
        expect(await f.queue.cancel('twice', 'ana')).toEqual({ ok: true, status: 'cancelling' });
        // Not released: only the cancel ends the run.
        const record = await f.settled('twice', 10_000);
        expect(record.outcome?.kind).toBe('cancelled');
      } finally {
        release?.();
        releaseSecond?.();
        await f.close();
      }
    });
  },
);
