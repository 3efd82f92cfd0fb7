import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readServerSentEvents } from '../../lab/src/server-sent-events.js';
import type { ApprovalVerdict } from '../loop/approval.js';
import type { RunEventLog, RunQueue, RunRecord, RunRegistry, RunRequest } from '../queue/run-queue.js';
import { fakeClock } from '../testing/fake-clock.js';
import type { TraceEvent } from '../trace/events.js';
import { parseTokenTable, staticTokens } from './authenticate.js';
import { listenOnLoopback } from './listen.js';
import { recordedRuns } from './recorded-runs.js';
import { createRunService, type RunServiceOptions } from './run-service.js';
import { viewerDirectory } from './viewer-directory.js';

const ana = 'Bearer token-ana-0001';
const ben = 'Bearer token-ben-0002';
const authenticate = staticTokens({ 'token-ana-0001': 'ana', 'token-ben-0002': { id: 'ben' } });

function stepStart(runId: string, seq: number, step = seq): TraceEvent {
  return {
    v: 1,
    runId,
    seq,
    at: 1_767_225_600_000 + seq,
    type: 'step-start',
    step,
    contextTokens: 100,
    billedTokens: 100 * step,
    costUsd: 0,
    toolsEnabled: true,
  };
}

function record(runId: string, actorId: string, status: RunRecord['status'] = 'running'): RunRecord {
  return {
    runId,
    agent: 'support',
    actorId,
    tenant: actorId,
    status,
    steps: 0,
    billedTokens: 0,
    costUsd: 0,
    attempts: 1,
    createdAt: 1_767_225_600_000,
    updatedAt: 1_767_225_600_000,
  };
}

/** The three stores, in memory, counting what the service asked of them. */
function fakes() {
  const records = new Map<string, RunRecord>();
  const logs = new Map<string, TraceEvent[]>();
  const wakers = new Set<() => void>();
  const calls = { enqueue: [] as RunRequest[], cancel: [] as string[], verdicts: [] as ApprovalVerdict[][] };
  let openFollows = 0;
  const wakeAll = () => {
    for (const wake of [...wakers]) wake();
  };
  const runs: RunRegistry = {
    get: async (runId) => records.get(runId),
    list: async ({ actorId, limit }) =>
      [...records.values()].filter((one) => one.actorId === actorId).slice(0, limit ?? 50),
  };
  const events: RunEventLog = {
    append: async (runId, list) => {
      logs.set(runId, [...(logs.get(runId) ?? []), ...list]);
      wakeAll();
    },
    read: async (runId, afterSeq) => (logs.get(runId) ?? []).filter((event) => event.seq > afterSeq),
    async *follow(runId, afterSeq, signal) {
      openFollows += 1;
      let cursor = afterSeq;
      try {
        while (!signal.aborted) {
          const pending = (logs.get(runId) ?? []).filter((event) => event.seq > cursor);
          for (const event of pending) {
            cursor = event.seq;
            yield event;
          }
          if (pending.length > 0) continue;
          if (records.get(runId)?.status === 'ended') return;
          await new Promise<void>((resolve) => {
            const wake = () => {
              wakers.delete(wake);
              signal.removeEventListener('abort', wake);
              resolve();
            };
            wakers.add(wake);
            signal.addEventListener('abort', wake);
          });
        }
      } finally {
        openFollows -= 1;
      }
    },
  };
  const queue: RunQueue = {
    enqueue: async (request) => {
      calls.enqueue.push(request);
      const runId = request.runId ?? 'generated';
      records.set(runId, record(runId, request.actor.id, 'queued'));
      return { ok: true, runId };
    },
    cancel: async (runId) => {
      calls.cancel.push(runId);
      const one = records.get(runId);
      if (!one) return { ok: false, reason: 'not_found' };
      if (one.status === 'ended') return { ok: false, reason: 'already_ended' };
      return { ok: true, status: 'cancelling' };
    },
    submitVerdicts: async (runId, verdicts) => {
      calls.verdicts.push(verdicts);
      const one = records.get(runId);
      if (!one) return { ok: false, reason: 'not_found' };
      if (one.status !== 'awaiting_approval') return { ok: false, reason: 'not_awaiting_approval' };
      const waiting = new Set(one.pendingApprovals?.map((request) => request.approvalId));
      const stale = verdicts.map((verdict) => verdict.approvalId).filter((id) => !waiting.has(id));
      if (stale.length > 0) return { ok: false, reason: 'stale_approval', staleApprovalIds: stale };
      return { ok: true };
    },
    close: async () => {},
  };
  return {
    records,
    logs,
    calls,
    queue,
    runs,
    events,
    end(runId: string) {
      const one = records.get(runId);
      if (one) one.status = 'ended';
      wakeAll();
    },
    get openFollows() {
      return openFollows;
    },
    get wakers() {
      return wakers.size;
    },
  };
}

function service(overrides: Partial<RunServiceOptions> = {}) {
  const stores = fakes();
  const clock = fakeClock();
  let next = 0;
  const app = createRunService({
    queue: stores.queue,
    runs: stores.runs,
    events: stores.events,
    authenticate,
    agents: ['support'],
    clock,
    generateId: (prefix) => `${prefix}_${++next}`,
    ...overrides,
  });
  const call = (path: string, init: RequestInit & { token?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.token) headers.set('Authorization', init.token);
    return app.request(path, { ...init, headers });
  };
  const post = (path: string, body: unknown, token = ana) =>
    call(path, {
      method: 'POST',
      token,
      headers: { 'Content-Type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { app, stores, clock, call, post };
}

const errorCode = async (response: Response) =>
  ((await response.json()) as { error: { code: string } }).error.code;

/** Every event of a stream that ends, as `{ event, id, data }`. */
async function drain(response: Response) {
  const out: { event: string; id: string | undefined; data: unknown }[] = [];
  for await (const message of readServerSentEvents(response.body!))
    out.push({ event: message.event, id: message.id, data: JSON.parse(message.data) });
  return out;
}

const runRoutes = (runId: string) => [
  { method: 'GET', path: `/runs/${runId}` },
  { method: 'GET', path: `/runs/${runId}/events` },
  {
    method: 'POST',
    path: `/runs/${runId}/approvals`,
    body: { verdicts: [{ approvalId: 'a', decision: 'approve' }] },
  },
  { method: 'POST', path: `/runs/${runId}/cancel`, body: {} },
];

describe('authentication', () => {
  it('401 with a code on every route without a token, with a malformed one, or an unknown one', async () => {
    const { stores, call } = service();
    stores.records.set('run_a', record('run_a', 'ana'));
    const routes = [
      { method: 'GET', path: '/runs' },
      { method: 'POST', path: '/runs', body: { agent: 'support', input: 'hi' } },
      ...runRoutes('run_a'),
      ...runRoutes('run_missing'),
    ];
    for (const token of [
      undefined,
      'Bearer',
      'Basic dG9rZW4tYW5hLTAwMDE=',
      'Bearer token-ana-0001x',
      'token-ana-0001',
      'Bearer token-ana-000',
    ]) {
      for (const route of routes) {
        const response = await call(route.path, {
          method: route.method,
          ...(token ? { token } : {}),
          headers: { 'Content-Type': 'application/json' },
          ...(route.body ? { body: JSON.stringify(route.body) } : {}),
        });
        expect(response.status, `${token} ${route.method} ${route.path}`).toBe(401);
        expect(response.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
        expect(await errorCode(response)).toBe('unauthorized');
      }
    }
    expect(stores.calls).toEqual({ enqueue: [], cancel: [], verdicts: [] });
  });

  it('GET /session says who the token is, null without a valid one (so the page asks without a 401)', async () => {
    const { call } = service();
    for (const token of [undefined, 'Bearer nope-nope-nope', 'Basic x'])
      expect(await (await call('/session', token ? { token } : {})).json()).toMatchObject({ actorId: null });
    expect(await (await call('/session', { token: ben })).json()).toMatchObject({ actorId: 'ben' });
  });

  it('an anonymous actor serves requests without a token, never one with a bad token', async () => {
    const { stores, call } = service({ anonymousActor: { id: 'viewer' }, readOnly: true });
    stores.records.set('run_v', record('run_v', 'viewer'));
    expect((await call('/runs/run_v')).status).toBe(200);
    expect((await call('/runs/run_v', { token: 'Bearer nope-nope-nope' })).status).toBe(401);
    expect((await call('/runs/run_v', { token: ana })).status).toBe(403);
  });

  it('the scheme is case-insensitive; the token is not', async () => {
    const { call } = service();
    expect((await call('/runs', { token: 'bearer token-ana-0001' })).status).toBe(200);
    expect((await call('/runs', { token: 'Bearer TOKEN-ANA-0001' })).status).toBe(401);
    expect(await (await call('/session', { token: ana })).json()).toEqual({
      actorId: 'ana',
      readOnly: false,
      agents: ['support'],
    });
  });

  it('staticTokens refuses short tokens', () => {
    expect(() => staticTokens({ short: 'ana' })).toThrow(/8 characters/);
  });
});

describe("scoping: a second actor's token never reaches the first actor's run", () => {
  it("403 on every route of another actor's run, 404 on an unknown one; the queue is never asked", async () => {
    const { stores, call } = service();
    stores.records.set('run_a', { ...record('run_a', 'ana', 'awaiting_approval'), pendingApprovals: [] });
    stores.logs.set('run_a', [stepStart('run_a', 0)]);
    for (const [runId, status, code] of [
      ['run_a', 403, 'forbidden'],
      ['run_nobody', 404, 'not_found'],
    ] as const) {
      for (const route of runRoutes(runId)) {
        const response = await call(route.path, {
          method: route.method,
          token: ben,
          headers: { 'Content-Type': 'application/json' },
          ...(route.body ? { body: JSON.stringify(route.body) } : {}),
        });
        expect(response.status, `${route.method} ${route.path}`).toBe(status);
        const text = await response.text();
        expect(JSON.parse(text).error.code).toBe(code);
        expect(text).not.toContain('step-start');
      }
    }
    expect(stores.calls).toEqual({ enqueue: [], cancel: [], verdicts: [] });
    expect(stores.openFollows).toBe(0);
    // The owner gets through on the same routes.
    expect((await call('/runs/run_a', { token: ana })).status).toBe(200);
  });

  it("each actor's list holds only its runs, whatever the query says", async () => {
    const { stores, call } = service();
    stores.records.set('run_a', record('run_a', 'ana'));
    stores.records.set('run_b', record('run_b', 'ben'));
    const list = async (token: string, query = '') =>
      ((await (await call(`/runs${query}`, { token })).json()) as { runs: RunRecord[] }).runs.map(
        (one) => one.runId,
      );
    expect(await list(ana)).toEqual(['run_a']);
    expect(await list(ben)).toEqual(['run_b']);
    const spoofed = await call('/runs?actorId=ana', { token: ben });
    expect(spoofed.status).toBe(400);
    expect(await errorCode(spoofed)).toBe('invalid_request');
  });

  it('a registry that leaks other actors into a list is filtered by the service', async () => {
    const stores = fakes();
    stores.records.set('run_a', record('run_a', 'ana'));
    const leaky: RunRegistry = { get: stores.runs.get, list: async () => [...stores.records.values()] };
    const app = createRunService({ ...stores, runs: leaky, authenticate });
    const response = await app.request('/runs', { headers: { Authorization: ben } });
    expect(await response.json()).toEqual({ runs: [] });
  });

  it('the actor is the token’s: an actor, runId or tenant in the body is refused, and by is the token’s', async () => {
    const { stores, post } = service();
    for (const extra of [
      { actor: { id: 'ana' } },
      { actorId: 'ana' },
      { runId: 'run_a' },
      { tenant: 'ana' },
    ]) {
      const response = await post('/runs', { agent: 'support', input: 'refund me', ...extra }, ben);
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe('invalid_request');
    }
    expect(stores.calls.enqueue).toEqual([]);
    const started = await post('/runs', { agent: 'support', input: 'refund me', priority: 3 }, ben);
    expect(started.status).toBe(201);
    expect(await started.json()).toEqual({ runId: 'run_1', status: 'queued' });
    expect(started.headers.get('Location')).toBe('/runs/run_1');
    expect(stores.calls.enqueue).toEqual([
      { agent: 'support', input: 'refund me', actor: { id: 'ben' }, runId: 'run_1', priority: 3 },
    ]);

    stores.records.set('run_p', {
      ...record('run_p', 'ben', 'awaiting_approval'),
      pendingApprovals: [
        {
          approvalId: 'call_1:abc',
          callId: 'call_1',
          tool: 'refund',
          input: { amount: 5 },
          effect: 'write',
          reason: '',
          cause: 'confirm',
          untrustedArguments: [],
        },
      ],
    });
    const forged = await post(
      '/runs/run_p/approvals',
      { verdicts: [{ approvalId: 'call_1:abc', decision: 'approve', by: 'ana' }] },
      ben,
    );
    expect(forged.status).toBe(400);
    expect(stores.calls.verdicts).toEqual([]);
    const approved = await post(
      '/runs/run_p/approvals',
      { verdicts: [{ approvalId: 'call_1:abc', decision: 'approve' }] },
      ben,
    );
    expect(approved.status).toBe(202);
    expect(stores.calls.verdicts).toEqual([[{ approvalId: 'call_1:abc', decision: 'approve', by: 'ben' }]]);
  });
});

describe('requests', () => {
  it('validates the run request: unknown agent, empty input, bad priority, not JSON, wrong type', async () => {
    const { stores, post, call } = service();
    const cases: [unknown, number, string][] = [
      [{ agent: 'nope', input: 'x' }, 400, 'unknown_agent'],
      [{ agent: 'support', input: '' }, 400, 'invalid_request'],
      [{ agent: 'support', input: 'x', priority: -1 }, 400, 'invalid_request'],
      [{ agent: 'support', input: 'x', priority: 1.5 }, 400, 'invalid_request'],
      [{ agent: 'support' }, 400, 'invalid_request'],
      [['support', 'x'], 400, 'invalid_request'],
      ['{"agent":', 400, 'invalid_request'],
      ['null', 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const response = await post('/runs', body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(await errorCode(response)).toBe(code);
    }
    const asForm = await call('/runs', {
      method: 'POST',
      token: ana,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'agent=support&input=x',
    });
    expect(asForm.status).toBe(415);
    expect(stores.calls.enqueue).toEqual([]);
  });

  it('refuses bodies over the limit, with or without a Content-Length', async () => {
    const { stores, post, call } = service({ maxBodyBytes: 1_024 });
    const big = { agent: 'support', input: 'x'.repeat(2_000) };
    const declared = await post('/runs', big);
    expect(declared.status).toBe(413);
    expect(await errorCode(declared)).toBe('body_too_large');
    const chunks = new TextEncoder().encode(JSON.stringify(big));
    const streamed = await call('/runs', {
      method: 'POST',
      token: ana,
      headers: { 'Content-Type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let index = 0; index < chunks.length; index += 100)
            controller.enqueue(chunks.slice(index, index + 100));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const verdicts = await post('/runs/run_x/approvals', {
      verdicts: [{ approvalId: 'a', decision: 'edit', input: 'x'.repeat(2_000) }],
    });
    expect(verdicts.status).toBe(413);
    expect(stores.calls).toEqual({ enqueue: [], cancel: [], verdicts: [] });
  });

  it('path tricks reach no other run: encoded slashes, dot segments, NULs', async () => {
    const { stores, call } = service();
    stores.records.set('run_a', record('run_a', 'ana'));
    stores.records.set('run_b', record('run_b', 'ben'));
    for (const path of [
      '/runs/run_b%2F..%2Frun_a',
      '/runs/run_b%2F..%2F..%2Fruns%2Frun_a',
      '/runs/%2e%2e',
      '/runs/run_a%00',
      '/runs/run_a%20',
      '/runs/..%2Frun_a/events',
    ]) {
      const response = await call(path, { token: ben });
      expect(response.status, path).toBe(404);
    }
    // Dot segments are resolved by URL parsing before routing: this is plainly ana's run, owner-checked.
    expect((await call('/runs/run_b/../run_a', { token: ana })).status).toBe(200);
    expect((await call('/runs/run_b/../run_a', { token: ben })).status).toBe(403);
  });

  it('verdicts: a stale approval id is 409 stale_approval with the ids, a run not paused is 409', async () => {
    const { stores, post } = service();
    stores.records.set('run_a', {
      ...record('run_a', 'ana', 'awaiting_approval'),
      pendingApprovals: [
        {
          approvalId: 'call_2:new',
          callId: 'call_2',
          tool: 'refund',
          input: { amount: 5 },
          effect: 'write',
          reason: '',
          cause: 'confirm',
          untrustedArguments: [],
        },
      ],
    });
    const stale = await post('/runs/run_a/approvals', {
      verdicts: [{ approvalId: 'call_1:old', decision: 'approve' }],
    });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({
      error: { code: 'stale_approval', message: expect.any(String), staleApprovalIds: ['call_1:old'] },
    });
    const twice = await post('/runs/run_a/approvals', {
      verdicts: [
        { approvalId: 'call_2:new', decision: 'approve' },
        { approvalId: 'call_2:new', decision: 'deny', reason: 'no' },
      ],
    });
    expect(twice.status).toBe(400);
    const denyWithoutReason = await post('/runs/run_a/approvals', {
      verdicts: [{ approvalId: 'call_2:new', decision: 'deny' }],
    });
    expect(denyWithoutReason.status).toBe(400);
    stores.records.set('run_r', record('run_r', 'ana', 'running'));
    const notPaused = await post('/runs/run_r/approvals', {
      verdicts: [{ approvalId: 'x', decision: 'approve' }],
    });
    expect(notPaused.status).toBe(409);
    expect(await errorCode(notPaused)).toBe('not_awaiting_approval');
  });

  it('cancel: 202 while running, 409 already_ended after', async () => {
    const { stores, post } = service();
    stores.records.set('run_a', record('run_a', 'ana'));
    const first = await post('/runs/run_a/cancel', {});
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ runId: 'run_a', status: 'cancelling' });
    stores.end('run_a');
    const second = await post('/runs/run_a/cancel', {});
    expect(second.status).toBe(409);
    expect(await errorCode(second)).toBe('already_ended');
    expect(stores.calls.cancel).toEqual(['run_a', 'run_a']);
  });

  it('a read-only service refuses every write', async () => {
    const { stores, post } = service({ readOnly: true });
    stores.records.set('run_a', record('run_a', 'ana', 'awaiting_approval'));
    for (const [path, body] of [
      ['/runs', { agent: 'support', input: 'x' }],
      ['/runs/run_a/approvals', { verdicts: [{ approvalId: 'a', decision: 'approve' }] }],
      ['/runs/run_a/cancel', {}],
    ] as const) {
      const response = await post(path, body);
      expect(response.status, path).toBe(405);
      expect(await errorCode(response)).toBe('read_only');
    }
    expect(stores.calls).toEqual({ enqueue: [], cancel: [], verdicts: [] });
  });

  it('a store that throws is a 500 with a code and no detail', async () => {
    const stores = fakes();
    const app = createRunService({
      ...stores,
      runs: { ...stores.runs, get: async () => Promise.reject(new Error('connection to 10.0.0.7 refused')) },
      authenticate,
    });
    const response = await app.request('/runs/run_a', { headers: { Authorization: ana } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text).error.code).toBe('internal');
    expect(text).not.toContain('10.0.0.7');
  });
});

describe('GET /runs/:id/events (Server-Sent Events)', () => {
  describe('a run-end waits for the record it announces (the worker appends the trace, then writes the record)', () => {
    const pauseEnd = (runId: string, seq: number): TraceEvent => ({
      v: 1,
      runId,
      seq,
      at: 1_767_225_600_000 + seq,
      type: 'run-end',
      outcome: { kind: 'awaiting_approval', requests: [] },
      steps: 1,
      contextTokens: 10,
      billedTokens: 10,
      costUsd: 0,
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const flush = async () => {
      for (let index = 0; index < 20; index += 1) await new Promise((resolve) => setImmediate(resolve));
    };
    /** Follows run_a (record running, trace: a step then the pause) and reads up to the pause's step. */
    async function following() {
      const { app, stores, clock } = service();
      stores.records.set('run_a', record('run_a', 'ana', 'running'));
      await stores.events.append('run_a', [stepStart('run_a', 0), pauseEnd('run_a', 1)]);
      const response = await app.request('/runs/run_a/events', { headers: { Authorization: ana } });
      const messages = readServerSentEvents(response.body!)[Symbol.asyncIterator]();
      expect((await messages.next()).value).toMatchObject({ event: 'trace', id: '0' });
      let pause: { event: string; id?: string | undefined } | undefined;
      const next = messages.next().then((result) => {
        pause = result.value;
      });
      return { stores, clock, messages, next, pending: () => pause === undefined, pause: () => pause };
    }

    it('held while the record is still running, sent once it is parked: the client finds pendingApprovals', async () => {
      const { stores, clock, next, pending, pause } = await following();
      for (let index = 0; index < 30; index += 1) {
        clock.advance(100);
        await flush();
      }
      expect(pending()).toBe(true);
      const approvalId = 'call_1:0000abcd';
      stores.records.set('run_a', {
        ...record('run_a', 'ana', 'awaiting_approval'),
        pendingApprovals: [
          { approvalId, callId: 'call_1', tool: 'refund', input: {}, effect: 'write', cause: 'confirm' },
        ] as unknown as NonNullable<RunRecord['pendingApprovals']>,
      });
      clock.advance(200);
      await next;
      expect(pause()).toMatchObject({ event: 'trace', id: '1' });
    });

    it('sent at once when a verdict already resumed the run (running again, a later attempt)', async () => {
      const { stores, clock, next, pending, pause } = await following();
      await flush();
      expect(pending()).toBe(true);
      stores.records.set('run_a', { ...record('run_a', 'ana', 'running'), attempts: 2 });
      clock.advance(10);
      await next;
      expect(pause()).toMatchObject({ event: 'trace', id: '1' });
    });

    it('sent at once when the log has moved past it (a client replaying an old pause of a resumed run)', async () => {
      const { stores, clock, next, pending, pause } = await following();
      await flush();
      expect(pending()).toBe(true);
      await stores.events.append('run_a', [stepStart('run_a', 2)]);
      clock.advance(10);
      await next;
      expect(pause()).toMatchObject({ event: 'trace', id: '1' });
    });

    it('sent at once when reading the record fails while it waits (the wait is best effort)', async () => {
      const { stores, clock, next, pending, pause } = await following();
      await flush();
      expect(pending()).toBe(true);
      stores.records.delete('run_a');
      const get = stores.runs.get;
      stores.runs.get = async () => {
        throw new Error('registry down');
      };
      clock.advance(10);
      await next;
      stores.runs.get = get;
      expect(pause()).toMatchObject({ event: 'trace', id: '1' });
    });

    it('sent after 5 s when the record never catches up (a worker that died between the writes)', async () => {
      const { clock, next, pending, pause } = await following();
      for (let index = 0; index < 49; index += 1) {
        clock.advance(100);
        await flush();
      }
      expect(pending()).toBe(true);
      for (let index = 0; index < 5 && pending(); index += 1) {
        clock.advance(200);
        await flush();
      }
      await next;
      expect(pause()).toMatchObject({ event: 'trace', id: '1' });
    });
  });

  it('sends the trace with id = seq, then end with the final record; Last-Event-ID resumes with no gap and no duplicate', async () => {
    const { stores, call } = service();
    stores.records.set('run_a', record('run_a', 'ana', 'ended'));
    stores.logs.set(
      'run_a',
      [0, 1, 2, 3, 4].map((seq) => stepStart('run_a', seq)),
    );
    const whole = await drain(await call('/runs/run_a/events', { token: ana }));
    expect(whole.map((message) => [message.event, message.id])).toEqual([
      ['trace', '0'],
      ['trace', '1'],
      ['trace', '2'],
      ['trace', '3'],
      ['trace', '4'],
      ['end', undefined],
    ]);
    expect(whole.at(-1)?.data).toMatchObject({ runId: 'run_a', status: 'ended' });
    for (const after of [0, 2, 4]) {
      const resumed = await drain(
        await call('/runs/run_a/events', { token: ana, headers: { 'Last-Event-ID': String(after) } }),
      );
      expect(resumed.filter((one) => one.event === 'trace').map((one) => Number(one.id))).toEqual(
        [0, 1, 2, 3, 4].filter((seq) => seq > after),
      );
    }
  });

  it('a live run: disconnect mid-run, reconnect with the last id, and every seq arrives exactly once', async () => {
    const { stores, call } = service();
    stores.records.set('run_a', record('run_a', 'ana', 'running'));
    await stores.events.append('run_a', [stepStart('run_a', 0), stepStart('run_a', 1)]);
    const first = await call('/runs/run_a/events', { token: ana });
    const seen: number[] = [];
    const reader = readServerSentEvents(first.body!);
    for await (const message of reader) {
      if (message.event === 'trace') seen.push(Number(message.id));
      if (seen.length === 2) break;
    }
    await vi.waitFor(() => expect(stores.openFollows).toBe(0));
    await stores.events.append('run_a', [stepStart('run_a', 2), stepStart('run_a', 3)]);
    const second = await call('/runs/run_a/events', {
      token: ana,
      headers: { 'Last-Event-ID': String(seen.at(-1)) },
    });
    const rest = (async () => drain(second))();
    await stores.events.append('run_a', [stepStart('run_a', 4)]);
    stores.end('run_a');
    for (const message of await rest) if (message.event === 'trace') seen.push(Number(message.id));
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it('an ended run whose trace outlived its end marker (expired, or a log that never ends) is read, not followed: the client gets end', async () => {
    const stores = fakes();
    stores.records.set('run_a', record('run_a', 'ana', 'ended'));
    const events = Array.from({ length: 1_203 }, (_, seq) => stepStart('run_a', seq));
    const reads: number[] = [];
    const neverEnding: RunEventLog = {
      ...stores.events,
      read: async (_runId, afterSeq, limit) => {
        reads.push(afterSeq);
        return events.filter((event) => event.seq > afterSeq).slice(0, limit);
      },
      async *follow(_runId, _afterSeq, signal) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
      },
    };
    const app = createRunService({ ...stores, events: neverEnding, authenticate });
    const messages = await drain(
      await app.request('/runs/run_a/events', { headers: { Authorization: ana, 'Last-Event-ID': '1' } }),
    );
    const seqs = messages.filter((one) => one.event === 'trace').map((one) => Number(one.id));
    expect(seqs).toEqual(events.map((event) => event.seq).filter((seq) => seq > 1));
    expect(messages.at(-1)).toMatchObject({ event: 'end', data: { status: 'ended' } });
    // A page at a time: 500, 500, 201 (short: the last).
    expect(reads).toEqual([1, 501, 1001]);
  });

  it('drops an event the log repeats (a resumed worker re-appending), so the client sees each seq once', async () => {
    const stores = fakes();
    stores.records.set('run_a', record('run_a', 'ana', 'running'));
    const repeating: RunEventLog = {
      ...stores.events,
      async *follow() {
        for (const seq of [0, 1, 2, 1, 2, 3]) yield stepStart('run_a', seq);
      },
    };
    const app = createRunService({ ...stores, events: repeating, authenticate });
    const messages = await drain(
      await app.request('/runs/run_a/events', { headers: { Authorization: ana } }),
    );
    expect(messages.filter((one) => one.event === 'trace').map((one) => one.id)).toEqual([
      '0',
      '1',
      '2',
      '3',
    ]);
  });

  it('refuses a Last-Event-ID that is not a seq', async () => {
    const { stores, call } = service();
    stores.records.set('run_a', record('run_a', 'ana', 'ended'));
    for (const garbage of ['abc', '-1', '1e3', '01', '1.0', '0x10', '9007199254740993', '3; DROP', '3 4']) {
      const response = await call('/runs/run_a/events', {
        token: ana,
        headers: { 'Last-Event-ID': garbage },
      });
      expect(response.status, garbage).toBe(400);
      expect(await errorCode(response)).toBe('invalid_last_event_id');
    }
    expect(stores.openFollows).toBe(0);
  });

  it('heartbeats on the injected clock while idle; a client that leaves releases the follow and the timer', async () => {
    const { stores, call, clock } = service({ heartbeatMs: 10_000 });
    stores.records.set('run_a', record('run_a', 'ana', 'awaiting_approval'));
    const response = await call('/runs/run_a/events', { token: ana });
    expect(response.headers.get('Content-Type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const more = async () => {
      text += decoder.decode((await reader.read()).value, { stream: true });
    };
    while (!text.includes('retry: 2000')) await more();
    expect(text).not.toContain('heartbeat');
    clock.advance(10_000);
    while (!text.includes(': heartbeat')) await more();
    clock.advance(10_000);
    while (text.split(': heartbeat').length < 3) await more();
    expect(stores.openFollows).toBe(1);
    expect(stores.wakers).toBe(1);
    await reader.cancel();
    await vi.waitFor(() => expect(stores.openFollows + clock.pendingTimers).toBe(0));
    expect(stores.wakers).toBe(0);
  });

  it('a hundred clients that connect and leave leave no listener behind', async () => {
    const { stores, call, clock } = service();
    stores.records.set('run_a', record('run_a', 'ana', 'running'));
    for (let index = 0; index < 100; index += 1) {
      const response = await call('/runs/run_a/events', { token: ana });
      const reader = response.body!.getReader();
      await reader.read();
      await reader.cancel();
    }
    await vi.waitFor(() => expect(stores.openFollows + clock.pendingTimers).toBe(0));
    expect(stores.wakers).toBe(0);
  });
});

describe('the viewer page', () => {
  it('serves index.html and assets with a strict policy; nothing outside the directory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'reins-viewer-'));
    const directory = join(root, 'viewer');
    mkdirSync(join(directory, 'assets'), { recursive: true });
    writeFileSync(join(directory, 'index.html'), '<!doctype html><title>viewer</title>');
    writeFileSync(join(directory, 'assets', 'viewer.js'), 'export {}');
    writeFileSync(join(root, 'secret.js'), 'the secret');
    const { call } = service({ viewer: viewerDirectory(directory) });
    const page = await call('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('Content-Security-Policy')).toContain("script-src 'self'");
    expect((await call('/assets/viewer.js')).status).toBe(200);
    for (const path of [
      '/assets/..%2Fsecret.js',
      '/assets/%2e%2e%2F%2e%2e%2Fsecret.js',
      '/assets/..%2F..%2Fsecret.js',
      '/secret.js',
      '/assets/.hidden',
    ]) {
      const response = await call(path);
      expect(response.status, path).toBe(404);
      expect(await response.text()).not.toContain('the secret');
    }
  });
});

describe('over a real socket', () => {
  it('a client that drops its connection releases the follow and the heartbeat', async () => {
    const { app, stores, clock } = service();
    stores.records.set('run_a', record('run_a', 'ana', 'running'));
    const listener = await listenOnLoopback(app);
    try {
      for (let index = 0; index < 5; index += 1) {
        const controller = new AbortController();
        const response = await fetch(`${listener.url}runs/run_a/events`, {
          headers: { Authorization: ana },
          signal: controller.signal,
        });
        const reader = response.body!.getReader();
        await reader.read();
        expect(stores.openFollows).toBe(1);
        controller.abort();
        await vi.waitFor(() => expect(stores.openFollows + clock.pendingTimers).toBe(0));
      }
      expect(stores.wakers).toBe(0);
    } finally {
      await listener.close();
    }
  });

  it('listens on loopback only', async () => {
    const { app } = service();
    for (const hostname of ['0.0.0.0', '::', '192.168.1.10', 'example.com'])
      await expect(listenOnLoopback(app, { hostname })).rejects.toThrow(/not a loopback address/);
  });
});

describe('token tables', () => {
  it('reads JSON and "token actor" lines, and refuses what it cannot read', () => {
    expect(
      parseTokenTable(
        '{ "token-ana-0001": "ana", "token-ben-0002": { "id": "ben", "scopes": ["refunds"] } }',
      ),
    ).toEqual({
      'token-ana-0001': 'ana',
      'token-ben-0002': { id: 'ben', scopes: ['refunds'] },
    });
    expect(parseTokenTable('# dev tokens\ntoken-ana-0001 ana\n\ntoken-ben-0002   ben # second\n')).toEqual({
      'token-ana-0001': 'ana',
      'token-ben-0002': 'ben',
    });
    expect(() => parseTokenTable('token-ana-0001')).toThrow(/line 1/);
    expect(() => parseTokenTable('token-ana-0001 ana extra')).toThrow(/line 1/);
    expect(() => parseTokenTable('{ "token-ana-0001": 3 }')).toThrow(/neither/);
  });
});

describe('recorded runs (reins trace view)', () => {
  it('one record per run, owned by the viewer; the log replays and ends; the queue refuses writes', async () => {
    const end = (runId: string, seq: number, kind: 'answered' | 'awaiting_approval'): TraceEvent => ({
      v: 1,
      runId,
      seq,
      at: 1_767_225_600_000 + seq,
      type: 'run-end',
      outcome: kind === 'answered' ? { kind, text: 'done' } : { kind, requests: [] },
      steps: 1,
      contextTokens: 10,
      billedTokens: 123,
      costUsd: 0.5,
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const trace = [
      stepStart('r1', 0, 1),
      end('r1', 1, 'answered'),
      stepStart('r2', 0, 1),
      end('r2', 1, 'awaiting_approval'),
    ];
    const { runs, events, queue } = recordedRuns(trace, 'viewer');
    expect(await runs.get('r1')).toMatchObject({
      actorId: 'viewer',
      status: 'ended',
      billedTokens: 123,
      costUsd: 0.5,
    });
    expect(await runs.get('r2')).toMatchObject({ status: 'awaiting_approval', pendingApprovals: [] });
    expect(await runs.list({ actorId: 'someone-else' })).toEqual([]);
    const seen: number[] = [];
    for await (const event of events.follow('r1', 0, new AbortController().signal)) seen.push(event.seq);
    expect(seen).toEqual([1]);
    await expect(queue.enqueue({ agent: 'x', input: 'y', actor: { id: 'viewer' } })).rejects.toThrow(
      /read-only/,
    );
  });
});
