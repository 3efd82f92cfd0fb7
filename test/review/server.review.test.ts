import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { agentRegistry } from '../../src/queue/agent-definition.js';
import { InProcessRunQueue } from '../../src/queue/in-process-run-queue.js';
import { MemoryRunEventLog } from '../../src/queue/memory-run-event-log.js';
import { MemoryRunRegistry } from '../../src/queue/memory-run-registry.js';
import { scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import { parseTokenTable, staticTokens } from '../../src/server/authenticate.js';
import { createRunService } from '../../src/server/run-service.js';

const ana = { Authorization: 'Bearer token-ana-0001' };
const ben = { Authorization: 'Bearer token-ben-0002' };

async function stack() {
  const registry = new MemoryRunRegistry();
  const events = new MemoryRunEventLog();
  const queue = new InProcessRunQueue({
    agents: agentRegistry([scriptedStepsAgent({ steps: 3, confirmStep: 1, effect: () => {} })]),
    checkpoint: new MemoryCheckpointStore(),
    registry,
    events,
  });
  const app = createRunService({
    queue,
    runs: registry,
    events,
    authenticate: staticTokens({ 'token-ana-0001': 'ana', 'token-ben-0002': 'ben' }),
    heartbeatMs: 60_000,
  });
  const res = await app.request('/runs', {
    method: 'POST',
    headers: { ...ana, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent: 'steps', input: 'go' }),
  });
  const { runId } = (await res.json()) as { runId: string };
  await queue.idle();
  return { app, queue, registry, runId };
}

describe('review: service', () => {
  it('the other actor gets 403/404 on every route, whatever the encoding of the id', async () => {
    const { app, runId } = await stack();
    const variants = [
      runId,
      encodeURIComponent(runId),
      runId.replace('_', '%5F'),
      `${runId}%20`,
      `./${runId}`,
    ];
    for (const id of variants)
      for (const [method, path] of [
        ['GET', `/runs/${id}`],
        ['GET', `/runs/${id}/events`],
        ['POST', `/runs/${id}/cancel`],
      ] as const) {
        const res = await app.request(path, { method, headers: ben });
        expect([403, 404], `${method} ${path}`).toContain(res.status);
      }
    const list = (await (await app.request('/runs', { headers: ben })).json()) as { runs: unknown[] };
    expect(list.runs).toEqual([]);
  });

  it('a malformed percent-encoding in the path is a 404 JSON error, not a 500', async () => {
    const { app } = await stack();
    for (const path of ['/runs/%E0%A4%A', '/runs/%', '/runs/%ZZ/events']) {
      const res = await app.request(path, { headers: ana });
      expect.soft(res.status, path).toBe(404);
      expect.soft(((await res.json()) as { error: { code: string } }).error.code, path).toBe('not_found');
    }
  });

  it('approvals of another actor: 403 and the run stays paused', async () => {
    const { app, registry, runId } = await stack();
    const approvalId = (await registry.get(runId))?.pendingApprovals?.[0]?.approvalId as string;
    const res = await app.request(`/runs/${runId}/approvals`, {
      method: 'POST',
      headers: { ...ben, 'Content-Type': 'application/json' },
      body: JSON.stringify({ verdicts: [{ approvalId, decision: 'approve' }] }),
    });
    expect(res.status).toBe(403);
    expect((await registry.get(runId))?.status).toBe('awaiting_approval');
  });

  it('Last-Event-ID garbage is a 400 JSON error; a huge one streams nothing but end', async () => {
    const { app, runId, queue, registry } = await stack();
    for (const id of ['-1', 'abc', '1.5', '1e3', '99999999999999999999', '0x10']) {
      const res = await app.request(`/runs/${runId}/events`, { headers: { ...ana, 'Last-Event-ID': id } });
      expect(res.status, id).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_last_event_id');
    }
    await queue.cancel(runId, 'ana');
    expect((await registry.get(runId))?.status).toBe('ended');
    const res = await app.request(`/runs/${runId}/events`, {
      headers: { ...ana, 'Last-Event-ID': String(Number.MAX_SAFE_INTEGER) },
    });
    const text = await res.text();
    expect(text).not.toContain('event: trace');
    expect(text).toContain('event: end');
  });

  it('a token table that names one token twice is refused, not resolved to the last actor', () => {
    expect(() => parseTokenTable('tok-shared-1 ana\ntok-shared-1 ben')).toThrow();
  });

  it('a token no bearer header can carry is refused when the table is loaded, not 401 forever', async () => {
    expect(() => staticTokens(parseTokenTable('tok!en!ana ana\nabc$defgh ben'))).toThrow(/may hold only/);
    // The tokens a header can carry all authenticate.
    const table = parseTokenTable('tok-en.ana~1 ana\nabc+def/gh== ben');
    const authenticate = staticTokens(table);
    const { queue } = await stack();
    const app = createRunService({
      queue,
      runs: new MemoryRunRegistry(),
      events: new MemoryRunEventLog(),
      authenticate,
    });
    for (const token of Object.keys(table)) {
      const res = await app.request('/runs', { headers: { Authorization: `Bearer ${token}` } });
      expect.soft(res.status, token).toBe(200);
    }
  });
});
