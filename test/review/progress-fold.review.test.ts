import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisRunEventLog } from '../../src/bullmq/redis-run-event-log.js';
import { RedisRunRegistry } from '../../src/bullmq/redis-run-registry.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { executeRun } from '../../src/queue/execute-run.js';
import { queuedRecord, type RunProgress } from '../../src/queue/run-stores.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import { RedisCheckpointStore } from '../../src/redis/redis-checkpoint-store.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

// A fixed nonce on demand, to replay "the same append sent again" (an ioredis resend).
const nonce = vi.hoisted(() => ({ fixed: undefined as string | undefined }));
vi.mock('../../src/redis/writer-nonce.js', async (importActual) => {
  const actual = await importActual<typeof import('../../src/redis/writer-nonce.js')>();
  return { writerNonce: () => nonce.fixed ?? actual.writerNonce() };
});

let redis: Redis;
beforeAll(() => {
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
});
afterAll(() => redis.disconnect());

const request = { agent: 'steps', input: 'go', actor: { id: 'ana' } };

function ev(runId: string, seq: number, type: 'step-start' | 'step-end' = 'step-end', pad = 0): TraceEvent {
  const base = { v: 1, runId, seq, at: 1000 + seq };
  if (type === 'step-end')
    return {
      ...base,
      type,
      step: seq,
      contextTokens: 1,
      billedTokens: 10 * seq,
      costUsd: 0.01 * seq,
      toolErrors: 0,
      ...(pad ? { pad: 'x'.repeat(pad) } : {}),
    } as unknown as TraceEvent;
  return { ...base, type, step: seq, ...(pad ? { pad: 'x'.repeat(pad) } : {}) } as unknown as TraceEvent;
}

function setup(name: string, ttl?: number) {
  const prefix = uniquePrefix(name);
  const t = ttl === undefined ? {} : { endedRunTtlMs: ttl };
  const registry = new RedisRunRegistry({ redis, prefix, ...t });
  const events = new RedisRunEventLog({ redis, prefix, records: registry, ...t });
  return { prefix, registry, events };
}

describe('review: progress folded into the append', () => {
  it('(1) encoding: any progress round-trips through get/list/update, status stays plain, other fields kept', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          steps: fc.nat(1_000_000),
          billedTokens: fc.nat(),
          costUsd: fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }).map((x) => x + 0),
          updatedAt: fc.integer({ min: 0, max: 2 ** 52 }),
        }),
        async (progress: RunProgress) => {
          const { registry, events } = setup('pf-enc');
          const runId = 'r';
          await registry.create(queuedRecord(runId, request, 5), request);
          await registry.update(runId, { status: 'running', attempts: 1 }, ['queued']);
          await events.append(runId, [ev(runId, 0, 'step-start'), ev(runId, 1)], progress);
          const got = await registry.get(runId);
          expect(got).toEqual({
            ...queuedRecord(runId, request, 5),
            status: 'running',
            attempts: 1,
            ...progress,
          });
          expect(await redis.hget(registry.recordKey(runId), 'status')).toBe('running');
          expect(await registry.request(runId)).toEqual(request);
          expect((await registry.list({ actorId: 'ana' })).map((r) => r.steps)).toEqual([progress.steps]);
          const after = await registry.update(runId, { status: 'ended' }, ['running']);
          expect(after).toMatchObject({ status: 'ended', ...progress });
        },
      ),
      { seed: 20261204, numRuns: 40 },
    );
  });

  it('(4) ARGV indexing: batch sizes 1..6, carry on/off, with and without progress', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ size: fc.integer({ min: 1, max: 6 }), big: fc.boolean(), prog: fc.boolean() }), {
          minLength: 1,
          maxLength: 5,
        }),
        async (batches) => {
          const { registry, events, prefix } = setup('pf-argv');
          const runId = 'a';
          await registry.create(queuedRecord(runId, request, 5), request);
          const sub = redis.duplicate();
          const notices: string[] = [];
          sub.on('message', (_c, m: string) => notices.push(m));
          await sub.subscribe(`${prefix}:events-notice:${runId}`);
          try {
            let seq = 0;
            const all: TraceEvent[] = [];
            let lastProg: RunProgress | undefined;
            for (const b of batches) {
              const batch = Array.from({ length: b.size }, (_, i) =>
                ev(runId, seq + i, i === b.size - 1 ? 'step-end' : 'step-start', b.big ? 9000 : 0),
              );
              const prog = b.prog
                ? { steps: seq + 7, billedTokens: seq, costUsd: 0.5, updatedAt: 99 + seq }
                : undefined;
              await events.append(runId, batch, prog);
              if (prog) lastProg = prog;
              all.push(...batch);
              seq += b.size;
            }
            expect(await events.read(runId, -1)).toEqual(all);
            expect(await events.nextSeq(runId)).toBe(seq);
            const rec = await registry.get(runId);
            expect(rec).toEqual({ ...queuedRecord(runId, request, 5), ...(lastProg ?? {}) });
            // A carried notice carries only the events, never the progress strings.
            const deadline = Date.now() + 5_000;
            while (notices.length < batches.length && Date.now() < deadline)
              await new Promise((r) => setTimeout(r, 5));
            expect(notices).toHaveLength(batches.length);
            let first = 0;
            batches.forEach((b, k) => {
              const notice = notices[k] as string;
              if (b.big) expect(notice).toBe(String(first + b.size - 1));
              else {
                const [head, ...lines] = notice.split('\n');
                expect(head).toMatch(new RegExp(`^e\\d+\\.${first}$`));
                expect(lines.map((l) => JSON.parse(l))).toEqual(all.slice(first, first + b.size));
              }
              first += b.size;
            });
          } finally {
            sub.disconnect();
          }
        },
      ),
      { seed: 4242, numRuns: 30 },
    );
  });

  it('(2) a refused (stale) append leaks no progress', async () => {
    const { registry, events } = setup('pf-stale');
    await registry.create(queuedRecord('s', request, 5), request);
    await events.append('s', [ev('s', 0, 'step-start'), ev('s', 1)], {
      steps: 1,
      billedTokens: 10,
      costUsd: 0.01,
      updatedAt: 10,
    });
    // The stale worker re-sends step 1 (another nonce): refused, and the record keeps its figures.
    await expect(
      events.append('s', [ev('s', 0, 'step-start'), ev('s', 1)], {
        steps: 1,
        billedTokens: 999,
        costUsd: 9,
        updatedAt: 11,
      }),
    ).rejects.toThrow();
    await expect(
      events.append('s', [ev('s', 5)], { steps: 5, billedTokens: 999, costUsd: 9, updatedAt: 12 }),
    ).rejects.toThrow();
    expect(await registry.get('s')).toMatchObject({
      steps: 1,
      billedTokens: 10,
      costUsd: 0.01,
      updatedAt: 10,
    });
  });

  it('(2) a resend of an applied append (same nonce) does not rewrite the figures of a later state', async () => {
    const { registry, events } = setup('pf-resend');
    await registry.create(queuedRecord('n', request, 5), request);
    nonce.fixed = 'fixed.nonce.1';
    try {
      const batch = [ev('n', 0, 'step-start'), ev('n', 1)];
      await events.append('n', batch, { steps: 1, billedTokens: 10, costUsd: 0.01, updatedAt: 10 });
      await registry.update('n', { status: 'ended', steps: 4, billedTokens: 40, updatedAt: 50 });
      await events.append('n', batch, { steps: 1, billedTokens: 10, costUsd: 0.01, updatedAt: 60 }); // taken as applied
    } finally {
      nonce.fixed = undefined;
    }
    expect(await registry.get('n')).toMatchObject({
      status: 'ended',
      steps: 4,
      billedTokens: 40,
      updatedAt: 50,
    });
  });

  it('(3) a progress write on an ended record neither drops nor re-arms its TTL', async () => {
    const { registry, events } = setup('pf-ttl', 60_000);
    await registry.create(queuedRecord('t', request, 5), request);
    await registry.update('t', { status: 'ended' });
    await redis.pexpire(registry.recordKey('t'), 30_000); // make a re-arm to 60 s visible
    await events.append('t', [ev('t', 0)], { steps: 1, billedTokens: 1, costUsd: 0, updatedAt: 1 });
    const ttl = await redis.pttl(registry.recordKey('t'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30_000);
  });

  // FINDING A: the fold guards on "record exists", not "record not ended". A late append that still
  // continues the stream (a stale worker whose run another worker ended without appending: the
  // `cancelling` → cancelledBeforeRun path) rewrites an ended record's figures and moves updatedAt past the end.
  it('(2) FINDING A: a late progress write leaves an ended record as it ended', async () => {
    const { registry, events } = setup('pf-ended');
    await registry.create(queuedRecord('e', request, 5), request);
    await events.append('e', [ev('e', 0, 'step-start'), ev('e', 1)], {
      steps: 1,
      billedTokens: 10,
      costUsd: 0.01,
      updatedAt: 10,
    });
    const endedAt = 100;
    await registry.update('e', {
      status: 'ended',
      outcome: { kind: 'cancelled', reason: 'x' },
      updatedAt: endedAt,
    });
    await events.end('e');
    // The stale worker's last step lands (its seq continues the stream: the ender appended nothing).
    await events.append('e', [ev('e', 2, 'step-start'), ev('e', 3)], {
      steps: 3,
      billedTokens: 30,
      costUsd: 0.03,
      updatedAt: 200,
    });
    expect(await registry.get('e')).toMatchObject({
      status: 'ended',
      steps: 1,
      billedTokens: 10,
      updatedAt: endedAt,
    });
  });

  // Same, through executeRun: another party ends the run while this worker is at step 3.
  it('(2) FINDING A via executeRun: progress keeps landing on a record ended under the worker', async () => {
    const { registry, events, prefix } = setup('pf-ended-exec');
    const seen: { status: string; steps: number; updatedAt: number }[] = [];
    const agents = agentRegistry([
      scriptedStepsAgent({
        steps: 5,
        effect: () => {},
        beforeStep: async (step) => {
          if (step === 3) await registry.update('x', { status: 'ended', updatedAt: 1 });
          if (step === 4) {
            const r = await registry.get('x');
            if (r) seen.push({ status: r.status, steps: r.steps, updatedAt: r.updatedAt });
          }
        },
      }),
    ]);
    const checkpoint = new RedisCheckpointStore({ redis, keyPrefix: `${prefix}:checkpoint` });
    await registry.create(queuedRecord('x', request, 1), request);
    await executeRun({ runId: 'x', request }, { agents, checkpoint, registry, events });
    // Step 3's progress was written on the ended record (steps 2 → 3, updatedAt 1 → now).
    expect(seen).toEqual([{ status: 'ended', steps: 2, updatedAt: 1 }]);
  });

  // FINDING B: `records` is checked for its prefix, not its connection. A registry on another
  // database (or server) is accepted, recordsProgress says true, the executor stops updating the
  // record, and every step's progress goes to a key that does not exist there: dropped silently.
  it('(1) FINDING B: a registry on another database is refused, or its record still shows progress', async () => {
    const other = new Redis(redisUrl, { db: 1, maxRetriesPerRequest: null });
    try {
      const prefix = uniquePrefix('pf-db');
      const registry = new RedisRunRegistry({ redis: other, prefix });
      let events: RedisRunEventLog;
      try {
        events = new RedisRunEventLog({ redis, prefix, records: registry });
      } catch {
        return; // refused at construction: fine
      }
      const seen: number[] = [];
      const agents = agentRegistry([
        scriptedStepsAgent({
          steps: 4,
          effect: () => {},
          beforeStep: async (step) => {
            if (step > 1) seen.push((await registry.get('d'))?.steps ?? -1);
          },
        }),
      ]);
      const checkpoint = new RedisCheckpointStore({ redis, keyPrefix: `${prefix}:checkpoint` });
      await registry.create(queuedRecord('d', request, 1), request);
      await executeRun({ runId: 'd', request }, { agents, checkpoint, registry, events });
      expect(seen).toEqual([1, 2, 3]);
    } finally {
      other.disconnect();
    }
  });

  it('(5) nonces: unique over many pool refills, well formed, and distinct across processes', async () => {
    const { writerNonce } = await vi.importActual<typeof import('../../src/redis/writer-nonce.js')>(
      '../../src/redis/writer-nonce.js',
    );
    const seen = new Set<string>();
    for (let i = 0; i < 256 * 400 + 7; i++) {
      const n = writerNonce();
      expect(n).toMatch(/^[0-9a-z]{1,7}\.[0-9a-z]{1,7}\.[0-9a-z]{1,7}$/);
      seen.add(n);
    }
    expect(seen.size).toBe(256 * 400 + 7);
    const dir = mkdtempSync(join(tmpdir(), 'nonce-'));
    const file = join(dir, 'n.mts');
    const mod = resolve(__dirname, '../../src/redis/writer-nonce.ts');
    writeFileSync(
      file,
      `import { writerNonce } from ${JSON.stringify(mod)};\nconst a=[];for(let i=0;i<3000;i++)a.push(writerNonce());console.log(a.join(' '));\n`,
    );
    const tsx = resolve(__dirname, '../../node_modules/.bin/tsx');
    const outs = [0, 1, 2, 3].map(() => execFileSync(tsx, [file], { encoding: 'utf8' }).trim().split(' '));
    const all = new Set([...seen, ...outs.flat()]);
    expect(all.size).toBe(seen.size + 4 * 3000);
  }, 60_000);
});
