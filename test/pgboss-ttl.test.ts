import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunEventLog } from '../src/pgboss/postgres-run-event-log.js';
import { PostgresRunRegistry } from '../src/pgboss/postgres-run-registry.js';
import { queuedRecord } from '../src/queue/run-stores.js';
import type { TraceEvent } from '../src/trace/events.js';
import { actor, fleet, sleep } from './review/pgboss-review-support.js';
import { uniqueTable } from './support/pg-tables.js';
import { connectTestPostgres } from './support/postgres.js';

// endedRunTtlMs on pg-boss: workers sweep runs that ended long enough ago (PostgresRunRegistry.sweep).

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const request = { agent: 'steps', input: 'go', actor };
const event = (runId: string, seq: number) =>
  ({ v: 1, runId, seq, at: seq, type: 'step-start', step: 1 }) as unknown as TraceEvent;

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('pg-boss: ended runs expire', () => {
  it('a sweep expires runs ended before the cutoff: gone from get, list and the trace, the id still refused, a follow ends; parked, running and recent runs stay', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const table = uniqueTable('ttl');
    const registry = new PostgresRunRegistry({ pool, schema: 'reins_test', table });
    const events = new PostgresRunEventLog({ pool, schema: 'reins_test', table });
    const make = async (
      runId: string,
      status: 'ended' | 'awaiting_approval' | 'running',
      updatedAt: number,
    ) => {
      await registry.create(queuedRecord(runId, request, 1_000), request);
      await events.append(runId, [event(runId, 0), event(runId, 1)]);
      await registry.update(runId, {
        status,
        updatedAt,
        ...(status === 'ended' ? { outcome: { kind: 'answered', text: 'ok' } } : {}),
      });
      if (status === 'ended') await events.end(runId);
    };
    try {
      await make('old', 'ended', 10_000);
      await make('recent', 'ended', 19_500);
      await make('parked', 'awaiting_approval', 10_000);
      await make('going', 'running', 10_000);
      // ttl 5 s at now 20 s: ended at or before 15 s expire.
      expect(await registry.sweep(20_000, 5_000)).toEqual(['old']);
      expect(await registry.sweep(20_000, 5_000)).toEqual([]);
      expect(await registry.get('old')).toBeUndefined();
      expect(await registry.request('old')).toBeUndefined();
      expect((await registry.list({ actorId: 'ana' })).map((record) => record.runId).sort()).toEqual([
        'going',
        'parked',
        'recent',
      ]);
      expect(await events.read('old', -1)).toEqual([]);
      expect((await events.read('recent', -1)).length).toBe(2);
      // The id stays refused, and nothing moves an expired record.
      expect(await registry.create(queuedRecord('old', request, 30_000), request)).toBe(false);
      expect(await registry.update('old', { status: 'queued' })).toBeUndefined();
      expect(await registry.start('old', 30_000, ['queued', 'running', 'ended'] as never)).toBeUndefined();
      const seen: number[] = [];
      for await (const next of events.follow('old', -1, AbortSignal.timeout(5_000))) seen.push(next.seq);
      expect(seen).toEqual([]);
      // Later, the recent one goes too; the parked and the running one never do.
      expect(await registry.sweep(1_000_000, 5_000)).toEqual(['recent']);
      expect((await registry.list({ actorId: 'ana' })).map((record) => record.runId).sort()).toEqual([
        'going',
        'parked',
      ]);
    } finally {
      await events.close();
    }
  });

  it('a worker given endedRunTtlMs sweeps a run that answered, on its maintenance interval', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const f = await fleet({
      agent: { steps: 2 },
      worker: { endedRunTtlMs: 200, maintenanceIntervalSeconds: 1, pollingIntervalSeconds: 0.2 },
    });
    try {
      await f.queue.enqueue({ ...request, runId: 'swept' });
      expect((await f.settled('swept')).outcome?.kind).toBe('answered');
      for (let i = 0; i < 100 && (await f.queue.registry.get('swept')); i++) await sleep(50);
      expect(await f.queue.registry.get('swept')).toBeUndefined();
      expect(await f.queue.events.read('swept', -1)).toEqual([]);
      expect((await f.queue.enqueue({ ...request, runId: 'swept' })).ok).toBe(false);
    } finally {
      await f.close();
    }
  });
});
