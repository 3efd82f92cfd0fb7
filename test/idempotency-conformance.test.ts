import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type IdempotencyStore,
  type IdempotentOptions,
  idempotent,
  MemoryIdempotencyStore,
  type Reconciliation,
  scopedIdempotencyKey,
} from '../src/idempotency/index.js';
import { defineTool, isToolError, type ToolContext } from '../src/index.js';
import { PostgresIdempotencyStore } from '../src/postgres/index.js';
import { RedisIdempotencyStore } from '../src/redis/index.js';
import { SqliteIdempotencyStore } from '../src/sqlite/index.js';
import { type FakeClock, fakeClock } from '../src/testing/index.js';
import { connectTestPostgres } from './support/postgres.js';
import { connectTestRedis, uniquePrefix } from './support/redis.js';

let redis: Redis | undefined;
let pool: pg.Pool | undefined;
const dir = mkdtempSync(join(tmpdir(), 'reins-idem-'));
beforeAll(async () => {
  redis = await connectTestRedis();
  pool = await connectTestPostgres();
});
afterAll(async () => {
  redis?.disconnect();
  await pool?.end();
});

const tables: string[] = [];
type Factory = () => Promise<IdempotencyStore>;
const stores: [string, Factory][] = [
  ['memory', async () => new MemoryIdempotencyStore()],
  ['sqlite', async () => new SqliteIdempotencyStore({ database: join(dir, `${Math.random()}.db`) })],
  [
    'postgres',
    async () => {
      const table = `reins_idem_${process.pid}_${tables.length}_${Math.floor(Math.random() * 1e6)}`;
      tables.push(table);
      const store = new PostgresIdempotencyStore({ pool: pool!, table });
      await store.migrate();
      return store;
    },
  ],
  ['redis', async () => new RedisIdempotencyStore({ redis: redis!, key: uniquePrefix('idem') })],
];
afterAll(async () => {
  for (const table of tables) await pool?.query(`DROP TABLE IF EXISTS ${table}`);
});

const context: ToolContext = {
  signal: new AbortController().signal,
  actor: undefined,
  runId: 'r',
  step: 1,
  callId: 'c',
};
const input = z.object({ idempotencyKey: z.string(), amountCents: z.number() });
const as = (id: string, tenant?: string): ToolContext => ({
  ...context,
  actor: { id, ...(tenant ? { attributes: { tenant } } : {}) },
});

function harness(
  store: IdempotencyStore,
  clock: FakeClock,
  options: {
    reconcile?: (key: string) => Promise<Reconciliation>;
    behave?: () => Promise<void>;
    scope?: IdempotentOptions<{ idempotencyKey: string; amountCents: number }>['scope'];
  } = {},
) {
  const effects: { key: string; amountCents: number }[] = [];
  const charge = defineTool({
    name: 'charge',
    description: 'Charge a card.',
    effect: 'write',
    input,
    execute: async ({ idempotencyKey, amountCents }) => {
      await options.behave?.();
      effects.push({ key: idempotencyKey, amountCents });
      return { chargeId: `ch_${effects.length}`, amountCents };
    },
  });
  let n = 0;
  const tool = idempotent(charge, {
    store,
    key: { field: 'idempotencyKey' },
    clock,
    leaseMs: 10_000,
    retentionMs: 86_400_000,
    generateId: (prefix) => `${prefix}_${++n}`,
    ...(options.reconcile ? { reconcile: (key: string) => options.reconcile!(key) } : {}),
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
  });
  const call = async (value: { idempotencyKey: string; amountCents: number }, as: ToolContext = context) => {
    try {
      return { ok: true as const, value: await tool.execute(value, as) };
    } catch (error) {
      // The tool's own errors pass through unchanged; reins' refusals are ToolErrors with codes.
      if (!isToolError(error)) return { ok: false as const, code: 'thrown', retry: undefined };
      return { ok: false as const, code: error.code, retry: error.retry };
    }
  };
  return { effects, call, tool };
}

describe.each(stores)('idempotency store conformance: %s', (name, make) => {
  const ready = () =>
    !((name === 'redis' && redis === undefined) || (name === 'postgres' && pool === undefined));

  it('runs once; a repeat returns the stored result marked deduplicated', async ({ skip }) => {
    if (!ready()) return skip();
    const { effects, call } = harness(await make(), fakeClock());
    const first = await call({ idempotencyKey: 'order-1', amountCents: 500 });
    const again = await call({ idempotencyKey: 'order-1', amountCents: 500 });
    expect(first).toEqual({ ok: true, value: { chargeId: 'ch_1', amountCents: 500 } });
    expect(again).toMatchObject({
      ok: true,
      value: { deduplicated: true, result: { chargeId: 'ch_1', amountCents: 500 } },
    });
    expect(effects).toHaveLength(1);
  });

  it('a concurrent repeat while in progress is refused with a retry-after, never run twice', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { effects, call } = harness(await make(), fakeClock(), { behave: () => gate });
    const first = call({ idempotencyKey: 'order-2', amountCents: 500 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await call({ idempotencyKey: 'order-2', amountCents: 500 })).toEqual({
      ok: false,
      code: 'idempotency_key_in_use',
      retry: 'after',
    });
    release();
    await first;
    expect(effects).toHaveLength(1);
  });

  it('the same key with a different input is refused and nothing runs', async ({ skip }) => {
    if (!ready()) return skip();
    const { effects, call } = harness(await make(), fakeClock());
    await call({ idempotencyKey: 'order-3', amountCents: 500 });
    expect(await call({ idempotencyKey: 'order-3', amountCents: 9_999 })).toEqual({
      ok: false,
      code: 'key_reused_with_different_input',
      retry: 'no',
    });
    expect(effects).toHaveLength(1);
  });

  it('a failure before the effect releases the key; a terminal failure is stored and replayed', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    let mode: 'refused' | 'bad' | 'ok' = 'refused';
    const { effects, call } = harness(await make(), fakeClock(), {
      behave: async () => {
        if (mode === 'refused')
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        if (mode === 'bad') throw Object.assign(new Error('HTTP 400 card declined'), { status: 400 });
      },
    });
    expect((await call({ idempotencyKey: 'order-4', amountCents: 1 })).ok).toBe(false);
    mode = 'ok';
    expect((await call({ idempotencyKey: 'order-4', amountCents: 1 })).ok).toBe(true);
    mode = 'bad';
    expect(await call({ idempotencyKey: 'order-5', amountCents: 1 })).toMatchObject({ ok: false });
    mode = 'ok';
    expect(await call({ idempotencyKey: 'order-5', amountCents: 1 })).toEqual({
      ok: false,
      code: 'operation_failed',
      retry: 'no',
    });
    expect(effects.map((effect) => effect.key)).toEqual(['order-4']);
  });

  it('a crashed holder\u2019s lease expires and is taken over; reconcile finds the effect and nothing runs twice', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = await make();
    const clock = fakeClock();
    const downstream = new Map<string, unknown>();
    const reconcile = async (key: string): Promise<Reconciliation> =>
      downstream.has(key) ? { happened: true, result: downstream.get(key) } : { happened: false };
    // A holder reserves, the effect lands downstream, and the process dies before "done" is recorded.
    await store.reserve({
      key: 'charge:order-6',
      fingerprint: await fingerprintOf({ amountCents: 700 }),
      token: 'dead',
      nowMs: clock.now(),
      leaseMs: 10_000,
      retentionMs: 86_400_000,
    });
    downstream.set('charge:order-6', { chargeId: 'ch_dead', amountCents: 700 });
    const { effects, call } = harness(store, clock, { reconcile });
    expect(await call({ idempotencyKey: 'order-6', amountCents: 700 })).toMatchObject({
      ok: false,
      code: 'idempotency_key_in_use',
    });
    clock.advance(10_000);
    expect(await call({ idempotencyKey: 'order-6', amountCents: 700 })).toMatchObject({
      ok: true,
      value: { deduplicated: true, result: { chargeId: 'ch_dead' } },
    });
    expect(effects).toHaveLength(0);
    expect(
      await store.complete({
        key: 'charge:order-6',
        token: 'dead',
        result: {},
        nowMs: clock.now(),
        retentionMs: 1,
      }),
    ).toBe(false);
  });

  it('without reconcile, a takeover runs the effect again: at-least-once in the crash window, and says so', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = await make();
    const clock = fakeClock();
    await store.reserve({
      key: 'charge:order-7',
      fingerprint: await fingerprintOf({ amountCents: 1 }),
      token: 'dead',
      nowMs: clock.now(),
      leaseMs: 10_000,
      retentionMs: 86_400_000,
    });
    const { effects, call, tool } = harness(store, clock);
    expect(tool.idempotency.guarantee).toBe('at-least-once-in-crash-window');
    clock.advance(10_000);
    expect((await call({ idempotencyKey: 'order-7', amountCents: 1 })).ok).toBe(true);
    expect(effects).toHaveLength(1);
  });

  it('an answer in doubt (a timeout) ends the lease so the next try reconciles at once', async ({ skip }) => {
    if (!ready()) return skip();
    const downstream = new Set<string>();
    let first = true;
    const { effects, call } = harness(await make(), fakeClock(), {
      reconcile: async (key) =>
        downstream.has(key) ? { happened: true, result: { chargeId: 'ch_landed' } } : { happened: false },
      behave: async () => {
        if (first) {
          first = false;
          downstream.add('charge:order-8');
          throw Object.assign(new Error('The operation was aborted due to timeout'), {
            name: 'TimeoutError',
          });
        }
      },
    });
    expect(await call({ idempotencyKey: 'order-8', amountCents: 1 })).toMatchObject({
      ok: false,
      code: 'outcome_uncertain',
      retry: 'yes',
    });
    expect(await call({ idempotencyKey: 'order-8', amountCents: 1 })).toMatchObject({
      ok: true,
      value: { deduplicated: true },
    });
    expect(effects).toHaveLength(0);
  });

  it('keys are scoped by actor: two actors with one key run twice, each gets its own result', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const { effects, call } = harness(await make(), fakeClock());
    const alice = await call({ idempotencyKey: '1001', amountCents: 500 }, as('tenant-a'));
    // The other tenant's 1001 is its own operation: a different amount is not a key reuse.
    const bob = await call({ idempotencyKey: '1001', amountCents: 900 }, as('tenant-b'));
    expect(alice).toEqual({ ok: true, value: { chargeId: 'ch_1', amountCents: 500 } });
    expect(bob).toEqual({ ok: true, value: { chargeId: 'ch_2', amountCents: 900 } });
    expect(await call({ idempotencyKey: '1001', amountCents: 500 }, as('tenant-a'))).toMatchObject({
      ok: true,
      value: { deduplicated: true, result: { chargeId: 'ch_1', amountCents: 500 } },
    });
    expect(await call({ idempotencyKey: '1001', amountCents: 900 }, as('tenant-b'))).toMatchObject({
      ok: true,
      value: { deduplicated: true, result: { chargeId: 'ch_2', amountCents: 900 } },
    });
    // Calls with no actor share one fixed scope of their own.
    expect(await call({ idempotencyKey: '1001', amountCents: 1 })).toMatchObject({
      ok: true,
      value: { chargeId: 'ch_3' },
    });
    expect(await call({ idempotencyKey: '1001', amountCents: 1 })).toMatchObject({
      value: { deduplicated: true },
    });
    expect(effects).toHaveLength(3);
  });

  it('an explicit scope replaces the actor: a function of input and context, or a string', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = await make();
    const byTenant = harness(store, fakeClock(), {
      scope: (_input, ctx) => String(ctx.actor?.attributes?.['tenant'] ?? 'none'),
    });
    await byTenant.call({ idempotencyKey: 'k', amountCents: 1 }, as('ann', 'acme'));
    expect(await byTenant.call({ idempotencyKey: 'k', amountCents: 1 }, as('ben', 'acme'))).toMatchObject({
      value: { deduplicated: true },
    });
    expect(await byTenant.call({ idempotencyKey: 'k', amountCents: 1 }, as('cal', 'globex'))).toMatchObject({
      value: { chargeId: 'ch_2' },
    });
    expect(byTenant.effects).toHaveLength(2);
    const shared = harness(store, fakeClock(), { scope: 'shop-1' });
    await shared.call({ idempotencyKey: 'k', amountCents: 1 }, as('ann'));
    expect(await shared.call({ idempotencyKey: 'k', amountCents: 1 }, as('ben'))).toMatchObject({
      value: { deduplicated: true },
    });
    expect(shared.effects).toHaveLength(1);
  });

  it('reconcile is given the scoped key; a record written without a scope stays the actor-less one', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = await make();
    const clock = fakeClock();
    const asked: string[] = [];
    const { call } = harness(store, clock, {
      reconcile: async (key) => {
        asked.push(key);
        return { happened: false };
      },
    });
    for (const actor of [undefined, 'tenant:a/b']) {
      const key = await scopedIdempotencyKey('charge', 'order-10', actor);
      await store.reserve({
        key,
        fingerprint: await fingerprintOf({ amountCents: 1 }),
        token: 'dead',
        nowMs: clock.now() - 20_000,
        leaseMs: 10_000,
        retentionMs: 86_400_000,
      });
      await call({ idempotencyKey: 'order-10', amountCents: 1 }, actor ? as(actor) : context);
    }
    expect(asked).toEqual(['charge:order-10', 'charge@tenant%3Aa%2Fb:order-10']);
  });

  it('keeps records for the retention period, then the key is free; a clock stepping back keeps a lease held', async ({
    skip,
  }) => {
    if (!ready()) return skip();
    const store = await make();
    const clock = fakeClock();
    const { effects, call } = harness(store, clock);
    await call({ idempotencyKey: 'order-9', amountCents: 1 });
    clock.advance(86_400_000 - 1);
    expect((await call({ idempotencyKey: 'order-9', amountCents: 1 })).ok).toBe(true);
    expect(effects).toHaveLength(1);
    clock.advance(1);
    await call({ idempotencyKey: 'order-9', amountCents: 1 });
    expect(effects).toHaveLength(2);
    await store.reserve({
      key: 'k-back',
      fingerprint: 'f',
      token: 't1',
      nowMs: clock.now(),
      leaseMs: 10_000,
      retentionMs: 86_400_000,
    });
    const back = await store.reserve({
      key: 'k-back',
      fingerprint: 'f',
      token: 't2',
      nowMs: clock.now() - 3_600_000,
      leaseMs: 10_000,
      retentionMs: 86_400_000,
    });
    expect(back.kind).toBe('in_progress');
  });
});

async function fingerprintOf(rest: unknown): Promise<string> {
  const { canonicalJson } = await import('../src/index.js');
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(rest)));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

describe('bad input and broken stores', () => {
  it('a key that is empty or longer than 255 characters is refused before anything runs', async () => {
    const { effects, call } = harness(new MemoryIdempotencyStore(), fakeClock());
    expect(await call({ idempotencyKey: '', amountCents: 1 })).toMatchObject({
      ok: false,
      code: 'invalid_idempotency_key',
    });
    expect(await call({ idempotencyKey: 'k'.repeat(256), amountCents: 1 })).toMatchObject({
      ok: false,
      code: 'invalid_idempotency_key',
    });
    expect((await call({ idempotencyKey: 'k'.repeat(255), amountCents: 1 })).ok).toBe(true);
    expect(effects).toHaveLength(1);
  });

  it('a scope that is not a non-empty string is refused before anything runs', async () => {
    for (const scope of [
      () => '',
      () => 42 as unknown as string,
      () => {
        throw new Error('no tenant');
      },
    ]) {
      const { effects, call } = harness(new MemoryIdempotencyStore(), fakeClock(), { scope });
      expect(await call({ idempotencyKey: 'k', amountCents: 1 }, as('ann'))).toEqual({
        ok: false,
        code: 'invalid_idempotency_scope',
        retry: 'no',
      });
      expect(effects).toHaveLength(0);
    }
    expect(() => harness(new MemoryIdempotencyStore(), fakeClock(), { scope: '' })).toThrow(/scope/);
  });

  it('a store that is down fails the call with a retryable error and never runs it unprotected', async () => {
    const down = {
      reserve: async () => {
        throw new Error('connection refused');
      },
    } as unknown as IdempotencyStore;
    const { effects, call } = harness(down, fakeClock());
    expect(await call({ idempotencyKey: 'x', amountCents: 1 })).toEqual({
      ok: false,
      code: 'idempotency_store_unavailable',
      retry: 'after',
    });
    expect(effects).toHaveLength(0);
  });

  it('a corrupt stored record is labeled and nothing runs', async () => {
    const path = join(dir, 'corrupt.db');
    const store = new SqliteIdempotencyStore({ database: path });
    const { effects, call } = harness(store, fakeClock());
    await call({ idempotencyKey: 'c', amountCents: 1 });
    const db = new Database(path);
    db.prepare("UPDATE reins_idempotency SET result = '{broken' WHERE key = 'charge:c'").run();
    db.close();
    expect(await call({ idempotencyKey: 'c', amountCents: 1 })).toEqual({
      ok: false,
      code: 'idempotency_record_corrupt',
      retry: 'no',
    });
    expect(effects).toHaveLength(1);
  });

  it('a PostgreSQL record can commit inside the caller\u2019s transaction, or not at all', async ({
    skip,
  }) => {
    if (pool === undefined) return skip();
    const table = `reins_idem_tx_${process.pid}`;
    tables.push(table);
    const store = new PostgresIdempotencyStore({ pool, table });
    await store.migrate();
    await pool.query(`CREATE TABLE IF NOT EXISTS ${table}_ledger (key TEXT PRIMARY KEY)`);
    tables.push(`${table}_ledger`);
    const clock = fakeClock();
    for (const outcome of ['rollback', 'commit'] as const) {
      const key = `tx-${outcome}`;
      await store.reserve({
        key,
        fingerprint: 'f',
        token: 't',
        nowMs: clock.now(),
        leaseMs: 10_000,
        retentionMs: 86_400_000,
      });
      const client = await pool.connect();
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${table}_ledger VALUES ($1)`, [key]);
      expect(
        await store.complete({
          key,
          token: 't',
          result: { ok: true },
          nowMs: clock.now(),
          retentionMs: 86_400_000,
          client,
        }),
      ).toBe(true);
      await client.query(outcome === 'commit' ? 'COMMIT' : 'ROLLBACK');
      client.release();
      const reserved = await store.reserve({
        key,
        fingerprint: 'f',
        token: 'u',
        nowMs: clock.now() + 20_000,
        leaseMs: 10_000,
        retentionMs: 86_400_000,
      });
      // Rolled back: the record is still in progress (and its lease ran out); committed: done.
      expect(reserved.kind).toBe(outcome === 'commit' ? 'completed' : 'taken_over');
    }
  });
});
