import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTable } from '../../test/support/pg-tables.js';
import { connectTestPostgres } from '../../test/support/postgres.js';
import { queuedRecord } from '../queue/run-stores.js';
import type { TraceEvent } from '../trace/events.js';
import { PostgresRunEventLog } from './postgres-run-event-log.js';
import { PostgresRunRegistry } from './postgres-run-registry.js';

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const event = (runId: string, seq: number, type = 'step-start') =>
  ({ v: 1, runId, seq, at: seq, type, step: 1, note: `n${seq}` }) as unknown as TraceEvent;
const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

function stores(db: pg.Pool, pollMs = 60_000) {
  const table = uniqueTable('log');
  return {
    log: new PostgresRunEventLog({ pool: db, schema: 'reins_test', table, pollMs }),
    registry: new PostgresRunRegistry({ pool: db, schema: 'reins_test', table }),
  };
}

/** Follows from `after` until the run ends or `ms` passes: the seqs seen and whether it ended by itself. */
function follow(log: PostgresRunEventLog, runId: string, after = -1) {
  const stop = new AbortController();
  const seen: number[] = [];
  const done = (async () => {
    for await (const next of log.follow(runId, after, stop.signal)) seen.push(next.seq);
    return !stop.signal.aborted;
  })();
  return { seen, done, stop };
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('PostgresRunEventLog', () => {
  it('appends in seq order and refuses an append that does not continue the run (trace_conflict)', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const { log } = stores(pool);
    await log.append('r', [event('r', 0), event('r', 1)]);
    await expect(log.append('r', [event('r', 1)])).rejects.toMatchObject({ reason: 'trace_conflict' });
    await expect(log.append('r', [event('r', 3)])).rejects.toMatchObject({ reason: 'trace_conflict' });
    await expect(log.append('r', [event('r', 2), event('r', 4)])).rejects.toMatchObject({
      reason: 'trace_conflict',
    });
    await expect(log.append('fresh', [event('fresh', 1)])).rejects.toMatchObject({
      reason: 'trace_conflict',
    });
    await log.append('r', [event('r', 2)]);
    expect((await log.read('r', -1)).map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(await log.read('r', 0, 1)).toEqual([event('r', 1)]);
    expect(await log.nextSeq('r')).toBe(3);
    expect(await log.nextSeq('nobody')).toBeUndefined();
    await log.close();
  });

  it('of concurrent appends at one seq (two workers), exactly one lands; the other is refused', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const { log } = stores(pool);
    for (let round = 0; round < 10; round++) {
      const runId = `race-${round}`;
      const settled = await Promise.allSettled(
        Array.from({ length: 4 }, (_, writer) =>
          log.append(runId, [
            { ...event(runId, 0), note: `w${writer}` } as unknown as TraceEvent,
            event(runId, 1),
          ]),
        ),
      );
      expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
      for (const s of settled)
        if (s.status === 'rejected') expect(s.reason).toMatchObject({ reason: 'trace_conflict' });
      expect((await log.read(runId, -1)).map((e) => e.seq)).toEqual([0, 1]);
    }
    await log.close();
  });

  it('a follower sees every event once, in order, as it lands (notified, not polled), and stops at the end', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const { log } = stores(pool);
    await log.append('f', [event('f', 0)]);
    const a = follow(log, 'f');
    const b = follow(log, 'f', 0);
    await sleep(100);
    for (let seq = 1; seq < 30; seq++) await log.append('f', [event('f', seq)]);
    await log.end('f');
    // The poll is 60 s: only notifications can have carried these.
    const ended = await Promise.race([Promise.all([a.done, b.done]), sleep(5_000).then(() => 'timeout')]);
    expect(ended).toEqual([true, true]);
    expect(a.seen).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(b.seen).toEqual(Array.from({ length: 29 }, (_, i) => i + 1));
    await log.close();
  });

  it('a follower whose listening connection is killed reads what was appended meanwhile once it is back', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const { log } = stores(pool);
    await log.append('k', [event('k', 0)]);
    const f = follow(log, 'k');
    await sleep(150);
    // The listening connection is the one that LISTENs on the log's channel.
    const listeners = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE $1`,
      [`%${log.tables.eventsChannel}%`],
    );
    expect(listeners.rows).toHaveLength(1);
    await pool.query('SELECT pg_terminate_backend($1)', [listeners.rows[0]?.pid]);
    await log.append('k', [event('k', 1)]);
    for (let waited = 0; waited < 5_000 && f.seen.length < 2; waited += 20) await sleep(20);
    expect(f.seen).toEqual([0, 1]);
    // And it listens again: a later append arrives by notification.
    await log.append('k', [event('k', 2)]);
    await log.end('k');
    expect(await Promise.race([f.done, sleep(5_000).then(() => 'timeout')])).toBe(true);
    expect(f.seen).toEqual([0, 1, 2]);
    await log.close();
  });

  it('an append given progress sets the record’s figures in the same statement, never on an ended record', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const { log, registry } = stores(pool);
    expect(log.recordsProgress(registry)).toBe(true);
    expect(log.recordsProgress(new PostgresRunRegistry({ pool, schema: 'reins_test', table: 'other' }))).toBe(
      false,
    );
    await registry.create(queuedRecord('p', request, 1));
    await log.append('p', [event('p', 0)], { steps: 1, billedTokens: 10, costUsd: 0.5, updatedAt: 2 });
    expect(await registry.get('p')).toMatchObject({ steps: 1, billedTokens: 10, costUsd: 0.5, updatedAt: 2 });
    // A refused append writes no progress.
    await expect(
      log.append('p', [event('p', 5)], { steps: 9, billedTokens: 99, costUsd: 9, updatedAt: 9 }),
    ).rejects.toMatchObject({ reason: 'trace_conflict' });
    expect((await registry.get('p'))?.steps).toBe(1);
    await registry.update('p', { status: 'ended' });
    await log.append('p', [event('p', 1)], { steps: 2, billedTokens: 20, costUsd: 1, updatedAt: 3 });
    expect((await registry.get('p'))?.steps).toBe(1);
    await log.close();
  });
});
