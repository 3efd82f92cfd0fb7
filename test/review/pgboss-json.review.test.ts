import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunRegistry } from '../../src/pgboss/postgres-run-registry.js';
import { defineAgent } from '../../src/queue/agent-definition.js';
import { InProcessRunQueue } from '../../src/queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import { queuedRecord } from '../../src/queue/run-stores.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { uniqueTable } from '../support/pg-tables.js';
import { connectTestPostgres } from '../support/postgres.js';
import { actor, fleet, sleep } from './pgboss-review-support.js';

// Records, requests and job data are jsonb (and actor ids text). jsonb refuses "\u0000" and an
// unpaired surrogate ("\ud83d"), both of which a JavaScript string (and the memory and Redis
// registries) carry without trouble. reins itself makes unpaired surrogates: errorInfo() cuts an
// error message at 2,000 UTF-16 units (src/errors/error-info.ts:22), which can split an emoji.

let pool: pg.Pool | undefined;
beforeAll(async () => {
  pool = await connectTestPostgres();
});
afterAll(async () => {
  await pool?.end();
});

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

describe.skipIf(process.env['REINS_SKIP_POSTGRES'] === '1')('review: strings jsonb cannot hold', () => {
  it('fixed: a run whose model error message is cut inside an emoji by errorInfo never ends: its record stays running, the job retries and dies', {
    timeout: 60_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const boom = defineAgent({
      name: 'boom',
      build: () => ({
        model: {
          name: 'boom',
          async generate() {
            // 1,999 characters then an emoji: the 2,000-unit cut keeps only its high surrogate.
            throw new Error(`${'x'.repeat(1_999)}😀 upstream said no`);
          },
        },
      }),
    });
    const f = await fleet({ extraAgents: [boom], worker: { pollingIntervalSeconds: 0.5 } });
    try {
      await f.queue.enqueue({ agent: 'boom', input: 'go', actor, runId: 'cut' });
      let record = await f.queue.registry.get('cut');
      for (let i = 0; i < 150 && record?.status !== 'ended'; i++) {
        await sleep(100);
        record = await f.queue.registry.get('cut');
      }
      // Expected: ended hard_error, as on the in-process and BullMQ queues.
      expect({ status: record?.status, kind: record?.outcome?.kind }).toEqual({
        status: 'ended',
        kind: 'hard_error',
      });
    } finally {
      await f.close();
    }
  });

  it('fixed: a run whose answer contains a NUL character never ends (ended() cannot write the outcome)', {
    timeout: 60_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const nul = defineAgent({
      name: 'nul',
      build: () => ({ model: scriptedModel([{ text: 'the file starts with \u0000\u0001' }]) }),
    });
    const f = await fleet({ extraAgents: [nul], worker: { pollingIntervalSeconds: 0.5 } });
    try {
      await f.queue.enqueue({ agent: 'nul', input: 'go', actor, runId: 'nul' });
      let record = await f.queue.registry.get('nul');
      for (let i = 0; i < 100 && record?.status !== 'ended'; i++) {
        await sleep(100);
        record = await f.queue.registry.get('nul');
      }
      expect({ status: record?.status, kind: record?.outcome?.kind }).toEqual({
        status: 'ended',
        kind: 'answered',
      });
    } finally {
      await f.close();
    }
  });

  it('fixed: enqueue of a request whose input holds a NUL throws a raw PostgreSQL error (the in-process queue queues it)', {
    timeout: 30_000,
  }, async ({ skip }) => {
    if (!pool) return skip();
    const f = await fleet({ workers: 0 });
    const local = new InProcessRunQueue({
      agents: f.agents,
      checkpoint: f.checkpoint,
      registry: new MemoryRunRegistry(),
      events: new MemoryRunEventLog(),
      concurrency: 0,
    });
    try {
      const odd = { agent: 'steps', input: 'pasted \u0000 binary', actor, runId: 'in-nul' };
      const expected = await local.enqueue(odd).catch((error: unknown) => String(error));
      expect(expected).toEqual({ ok: true, runId: 'in-nul' });
      expect(await f.queue.enqueue(odd).catch((error: unknown) => String(error))).toEqual(expected);
    } finally {
      await local.close();
      await f.close();
    }
  });

  it('fixed: PostgresRunRegistry stores what MemoryRunRegistry stores (NUL and unpaired surrogates as U+FFFD, fractional timestamps), and refuses a NUL in an actor id by name', async ({
    skip,
  }) => {
    if (!pool) return skip();
    const postgres = new PostgresRunRegistry({ pool, schema: 'reins_test', table: uniqueTable('js') });
    const memory = new MemoryRunRegistry();
    const cases: [string, (r: PostgresRunRegistry | MemoryRunRegistry) => Promise<unknown>][] = [
      [
        'outcome text with NUL',
        async (r) => {
          await r.create(queuedRecord('a', request, 1));
          return r.update('a', { status: 'ended', outcome: { kind: 'answered', text: 'a\u0000b' } });
        },
      ],
      [
        'outcome text with an unpaired surrogate',
        async (r) => {
          await r.create(queuedRecord('b', request, 1));
          return r.update('b', { status: 'ended', outcome: { kind: 'answered', text: 'cut \ud83d' } });
        },
      ],
      ['actor id with NUL', (r) => r.create(queuedRecord('c', { ...request, actor: { id: 'a\u0000' } }, 1))],
      ['a clock with sub-millisecond time', (r) => r.create(queuedRecord('d', request, 1_700_000_000_000.5))],
      [
        'start at a sub-millisecond time',
        async (r) => {
          await r.create(queuedRecord('e', request, 1));
          return (await r.start('e', 2.25, ['queued']))?.updatedAt;
        },
      ],
    ];
    const outcomes: Record<string, [string, string]> = {};
    for (const [name, run] of cases) {
      const settle = (r: PostgresRunRegistry | MemoryRunRegistry) =>
        run(r).then(
          (value) => `ok ${JSON.stringify(value) ?? ''}`.slice(0, 60),
          (error: unknown) => `threw ${(error as Error).message}`,
        );
      outcomes[name] = [await settle(memory), await settle(postgres)];
    }
    // Fixed: what jsonb cannot hold is stored as U+FFFD (the record is written, its text loses the
    // character); an actor id with NUL is refused with a labeled error (replacing it would give one
    // actor another's runs); fractional times are kept.
    expect(outcomes['outcome text with NUL']?.[1]).toMatch(/^ok /);
    expect(outcomes['outcome text with an unpaired surrogate']?.[1]).toMatch(/^ok /);
    expect((await postgres.get('a'))?.outcome).toEqual({ kind: 'answered', text: 'a\ufffdb' });
    expect((await postgres.get('b'))?.outcome).toEqual({ kind: 'answered', text: 'cut \ufffd' });
    expect(outcomes['actor id with NUL']?.[1]).toMatch(/^threw actorId: .* holds a NUL character/);
    expect(await postgres.get('d')).toEqual(await memory.get('d'));
    expect(outcomes['start at a sub-millisecond time']).toEqual(['ok 2.25', 'ok 2.25']);
  });
});
