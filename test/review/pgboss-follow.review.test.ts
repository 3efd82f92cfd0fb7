import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { PostgresRunEventLog } from '../../src/pgboss/postgres-run-event-log.js';
import { PostgresRunRegistry } from '../../src/pgboss/postgres-run-registry.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { executeRun } from '../../src/queue/execute-run.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { queuedRecord } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { uniqueTable } from '../support/pg-tables.js';
import { connectTestPostgres } from '../support/postgres.js';
import { seqs, sleep } from './pgboss-review-support.js';

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };
const event = (runId: string, seq: number, type = 'step-start') =>
  ({ v: 1, runId, seq, at: seq, type, step: 1 }) as unknown as TraceEvent;

/** Follows until the run ends or `ms` passes: resolves 'ended' or 'still following'. */
async function followFor(log: { follow: PostgresRunEventLog['follow'] }, runId: string, ms: number) {
  const stop = new AbortController();
  const seen: number[] = [];
  const done = (async () => {
    for await (const next of log.follow(runId, -1, stop.signal)) seen.push(next.seq);
    return stop.signal.aborted ? 'still following' : 'ended';
  })();
  const timer = setTimeout(() => stop.abort(), ms);
  const result = await done;
  clearTimeout(timer);
  return { result, seen };
}

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('review: PostgresRunEventLog.follow', () => {
  it('fixed: a run whose record ended but whose end marker was never written (end() failed, the job retried) is followed forever', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const table = uniqueTable('fw');
    const registry = new PostgresRunRegistry({ pool, schema: 'reins_test', table });
    // The log's end() fails once, as a dropped connection makes it fail after the record was written ended.
    let failEnd = true;
    class FlakyEnd extends PostgresRunEventLog {
      override async end(runId: string): Promise<void> {
        if (failEnd) {
          failEnd = false;
          throw new Error('Connection terminated unexpectedly');
        }
        return super.end(runId);
      }
    }
    const events = new FlakyEnd({ pool, schema: 'reins_test', table, pollMs: 200 });
    const options = {
      agents: agentRegistry([scriptedStepsAgent({ steps: 3, effect: () => {} })]),
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    };
    await registry.create(queuedRecord('r', request, Date.now()), request);
    const job = { runId: 'r', request };
    // The worker's execution throws (pg-boss fails the job) after the record ended...
    await expect(executeRun(job, options)).rejects.toThrow('Connection terminated');
    expect((await registry.get('r'))?.status).toBe('ended');
    // ...and the retry finds the record ended and does nothing: no marker is ever written.
    expect(await executeRun(job, options)).toEqual({ kind: 'skipped', reason: 'already_ended' });
    // The Redis log ends a follow on an ended record (RedisRunEventLog.#ended); this one polls forever.
    try {
      const { result, seen } = await followFor(events, 'r', 3_000);
      expect(seqs(await events.read('r', -1))).toEqual(seen);
      expect(result).toBe('ended');
    } finally {
      await events.close();
    }
  });

  it('fixed: a follower aborted while its read is in flight is not stopped by the abort: it waits out pollMs', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const db = pool;
    const table = uniqueTable('fa');
    let onRead: (() => void) | undefined;
    // The pool as the log sees it: each follower read calls onRead as it is sent.
    const spied = {
      query: ((text: string, values?: unknown[]) => {
        if (typeof text === 'string' && text.includes('json_agg')) onRead?.();
        return db.query(text, values);
      }) as pg.Pool['query'],
      connect: db.connect.bind(db) as pg.Pool['connect'],
    };
    const log = new PostgresRunEventLog({ pool: spied, schema: 'reins_test', table, pollMs: 20_000 });
    const stop = new AbortController();
    // The run has no event yet: the follower's first read finds nothing, and the abort lands in it.
    onRead = () => stop.abort();
    const started = Date.now();
    const seen: number[] = [];
    const following = (async () => {
      for await (const next of log.follow('a', -1, stop.signal)) seen.push(next.seq);
    })();
    try {
      await Promise.race([following, sleep(3_000)]);
      // The memory log returns at once on an abort; here the follower sleeps its full pollMs (20 s).
      expect(Date.now() - started).toBeLessThan(2_900);
      expect(seen).toEqual([]);
    } finally {
      await log.close();
    }
  });

  it('held: a follower reading pages of 500 sees 1,234 events once each, in order, then stops at the end marker', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const log = new PostgresRunEventLog({
      pool,
      schema: 'reins_test',
      table: uniqueTable('fp'),
      pollMs: 60_000,
    });
    const memory = new MemoryRunEventLog();
    const stop = new AbortController();
    const seen: number[] = [];
    const following = (async () => {
      for await (const next of log.follow('p', -1, stop.signal)) seen.push(next.seq);
    })();
    for (let seq = 0; seq < 1_234; seq += 617) {
      const batch = Array.from({ length: 617 }, (_, i) => event('p', seq + i));
      await Promise.all([log.append('p', batch), memory.append('p', batch)]);
    }
    await log.end('p');
    await Promise.race([following, sleep(10_000)]);
    stop.abort();
    expect(seen).toEqual(Array.from({ length: 1_234 }, (_, i) => i));
    expect(await log.read('p', 600, 3)).toEqual(await memory.read('p', 600, 3));
    await log.close();
  });

  it('held: 40 concurrent followers of one run on a pool of 4 connections each see every event once and end', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const { default: pgModule } = await import('pg');
    const small = new pgModule.Pool({
      connectionString: (pool.options as { connectionString: string }).connectionString,
      max: 4,
    });
    const log = new PostgresRunEventLog({
      pool: small,
      schema: 'reins_test',
      table: uniqueTable('fm'),
      pollMs: 60_000,
    });
    const writer = new PostgresRunEventLog({
      pool,
      schema: 'reins_test',
      table: log.tables.table,
      pollMs: 60_000,
    });
    const followers = Array.from({ length: 40 }, () => {
      const stop = new AbortController();
      const seen: number[] = [];
      const done = (async () => {
        for await (const next of log.follow('m', -1, stop.signal)) seen.push(next.seq);
      })();
      return { seen, done, stop };
    });
    await sleep(300);
    for (let seq = 0; seq < 50; seq++) await writer.append('m', [event('m', seq)]);
    await writer.end('m');
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(15_000)]);
    for (const f of followers) {
      f.stop.abort();
      expect(f.seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
    await log.close();
    await writer.close();
    await small.end();
  });
});
