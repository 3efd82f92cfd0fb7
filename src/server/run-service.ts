import type { Context } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { RunEventLog, RunQueue, RunRecord, RunRegistry } from '../queue/run-queue.js';
import { sleep } from '../resilience/sleep.js';
import { type Clock, type IdGenerator, randomIds, systemClock } from '../time/clock.js';
import type { Actor } from '../tools/define-tool.js';
import { type Authenticate, bearerToken } from './authenticate.js';
import { parseLastEventId } from './last-event-id.js';
import {
  describeIssues,
  listRunsQuery,
  runIdPattern,
  startRunBody,
  verdictsBody,
} from './request-schemas.js';
import { errorResponse } from './run-service-error.js';
import { streamTraceEvents } from './trace-event-stream.js';
import { isSafeAssetPath, type ViewerAssets } from './viewer-assets.js';

/** How long a `run-end` waits for its record before it is sent anyway (a worker that died between the two). */
const recordCatchUpMs = 5_000;

/**
 * Resolves once the run's record has caught up with the `run-end` at `seq` the trace just showed:
 * the record is no longer `running`, or the run has moved on (a verdict started it again: a later
 * attempt, or events after this `run-end` in the log, as when a client replays an old pause). A
 * worker appends a run's last events before it parks or ends the record, so without this wait a
 * client that saw the pause could read a record still `running`, with no `pendingApprovals`. A
 * worker that died between the two writes leaves the record running until the queue redelivers
 * the run: after {@link recordCatchUpMs} the event is sent anyway.
 */
async function recordCaughtUp(
  runs: RunRegistry,
  events: RunEventLog,
  runId: string,
  seq: number,
  clock: Clock,
  signal: AbortSignal,
): Promise<void> {
  // The record's attempt while it is still behind the run-end; undefined once it has caught up.
  const behind = async (): Promise<number | undefined> => {
    const [record, after] = await Promise.all([runs.get(runId), events.read(runId, seq, 1)]);
    return record?.status === 'running' && after.length === 0 ? record.attempts : undefined;
  };
  const attempt = await behind();
  if (attempt === undefined) return;
  const deadline = clock.now() + recordCatchUpMs;
  for (let delay = 5; clock.now() < deadline; delay = Math.min(delay * 2, 200)) {
    try {
      await sleep(delay, { clock, signal });
    } catch {
      return;
    }
    const now = await behind();
    if (now === undefined || now !== attempt) return;
  }
}

/** Options of {@link createRunService}. */
export interface RunServiceOptions {
  /** Where runs are queued, cancelled and resumed with verdicts. */
  queue: RunQueue;
  /** The runs' records: every read is checked against the record's `actorId`. */
  runs: RunRegistry;
  /** The runs' traces, streamed by `GET /runs/:id/events`. */
  events: RunEventLog;
  /** Bearer token → actor. A request without a token, or with one this refuses, gets 401. */
  authenticate: Authenticate;
  /** The agent names `POST /runs` accepts (`unknown_agent` otherwise). @default any name (the queue decides) */
  agents?: readonly string[];
  /** Makes run ids (`run_…`). @default randomIds */
  generateId?: IdGenerator;
  /** Times heartbeats. @default systemClock */
  clock?: Clock;
  /** A comment on an idle event stream this often. @default 15000 */
  heartbeatMs?: number;
  /** Request bodies above this are refused with 413. @default 65536 */
  maxBodyBytes?: number;
  /** The longest user message `POST /runs` takes. @default 32000 */
  maxInputChars?: number;
  /** Serves the run viewer at `/`. @default none (the API only) */
  viewer?: ViewerAssets;
  /** Refuse every write (`read_only`): `reins trace view` serves a recorded file this way. @default false */
  readOnly?: boolean;
  /**
   * The actor of a request that sends no token at all (a bad token is still 401). Only for a
   * read-only service on loopback, such as `reins trace view`. @default none: no token is 401
   */
  anonymousActor?: Actor;
}

type Variables = { actor: Actor };
type RunContext = Context<{ Variables: Variables }>;

/** What `GET /session` answers: who the token is (`null`: no token, or one not valid), and what the viewer may offer. */
export interface RunServiceSession {
  actorId: string | null;
  readOnly: boolean;
  agents: string[] | null;
}

/** A run as the API shows it: the record, without anything but the owner's own id. */
export type RunView = RunRecord;

// The page runs only its own scripts; inline style attributes are how the lab sizes its bars.
const viewerPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The HTTP face of queued runs (Hono): start a run, list and read your own runs, follow a run's
 * trace as Server-Sent Events, send verdicts to a paused run, cancel one — and, with `viewer`, the
 * run viewer page at `/`. Every route but the page needs `Authorization: Bearer <token>`; the
 * actor comes from the token only, and every read and write is scoped to the runs that actor owns
 * (another actor's run: 403; an unknown run: 404). Errors are `{ error: { code, message } }`.
 *
 * @example
 * import { serve } from '@hono/node-server';
 * import { createRunService, staticTokens } from 'reins/server';
 * declare const queue: import('reins/server').RunServiceOptions['queue'];
 * declare const runs: import('reins/server').RunServiceOptions['runs'];
 * declare const events: import('reins/server').RunServiceOptions['events'];
 * const app = createRunService({ queue, runs, events, authenticate: staticTokens({ 'dev-token-ana': 'ana' }) });
 * serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 8787 });
 */
export function createRunService(options: RunServiceOptions): Hono<{ Variables: Variables }> {
  const { queue, runs, events, authenticate } = options;
  const clock = options.clock ?? systemClock;
  const generateId = options.generateId ?? randomIds;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBodyBytes = options.maxBodyBytes ?? 65_536;
  const startBody = startRunBody(options.maxInputChars ?? 32_000);
  const agents = options.agents ? new Set(options.agents) : undefined;
  const readOnly = options.readOnly ?? false;
  const app = new Hono<{ Variables: Variables }>();

  app.onError((_error, c) =>
    errorResponse(c, 'internal', 'the service failed; nothing was changed by this error'),
  );
  app.notFound((c) => errorResponse(c, 'not_found', 'no such route'));

  const limitBody = bodyLimit({
    maxSize: maxBodyBytes,
    onError: (c) => errorResponse(c, 'body_too_large', `request bodies are limited to ${maxBodyBytes} bytes`),
  });

  /** The request's actor; `missing` (no Authorization header) or `invalid` otherwise. */
  const actorOf = async (c: RunContext): Promise<Actor | 'missing' | 'invalid'> => {
    const header = c.req.header('Authorization');
    if (header === undefined) return options.anonymousActor ?? 'missing';
    const token = bearerToken(header);
    if (token === undefined) return 'invalid';
    return (await authenticate(token)) ?? 'invalid';
  };
  const requireActor = async (c: RunContext, next: () => Promise<void>) => {
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    const actor = await actorOf(c);
    if (actor === 'missing') return errorResponse(c, 'unauthorized', 'send Authorization: Bearer <token>');
    if (actor === 'invalid') return errorResponse(c, 'unauthorized', 'the token is not valid');
    c.set('actor', actor);
    await next();
  };
  app.use('/runs', requireActor);
  app.use('/runs/*', requireActor);

  /** The caller's run, or the error response that says why not. */
  const ownRun = async (c: RunContext): Promise<RunRecord | Response> => {
    const runId = c.req.param('id') ?? '';
    if (!runIdPattern.test(runId)) return errorResponse(c, 'not_found', 'no such run');
    const record = await runs.get(runId);
    if (!record) return errorResponse(c, 'not_found', 'no such run');
    if (record.actorId !== c.get('actor').id)
      return errorResponse(c, 'forbidden', 'this run belongs to another actor');
    return record;
  };

  const jsonBody = async (
    c: RunContext,
  ): Promise<{ ok: true; body: unknown } | { ok: false; response: Response }> => {
    const type = c.req.header('Content-Type') ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type))
      return {
        ok: false,
        response: errorResponse(c, 'unsupported_media_type', 'send Content-Type: application/json'),
      };
    try {
      return { ok: true, body: await c.req.json() };
    } catch {
      return { ok: false, response: errorResponse(c, 'invalid_request', 'the body is not JSON') };
    }
  };

  const refuseWrite = (c: RunContext) =>
    errorResponse(
      c,
      'read_only',
      'this service is read-only (a recorded trace): nothing can be started or changed',
    );

  // Answers without a valid token too (actorId null), so the page can ask who it is without a 401
  // in the browser's console.
  app.get('/session', async (c) => {
    c.header('Cache-Control', 'no-store');
    const actor = await actorOf(c);
    const session: RunServiceSession = {
      actorId: typeof actor === 'string' ? null : actor.id,
      readOnly,
      agents: options.agents ? [...options.agents] : null,
    };
    return c.json(session);
  });

  app.post('/runs', limitBody, async (c) => {
    if (readOnly) return refuseWrite(c);
    const parsed = await jsonBody(c);
    if (!parsed.ok) return parsed.response;
    const body = startBody.safeParse(parsed.body);
    if (!body.success)
      return errorResponse(c, 'invalid_request', 'the run request is not valid', {
        issues: describeIssues(body.error),
      });
    if (agents && !agents.has(body.data.agent))
      return errorResponse(c, 'unknown_agent', 'no agent of that name is registered');
    const actor = c.get('actor');
    const result = await queue.enqueue({
      agent: body.data.agent,
      input: body.data.input,
      actor,
      runId: generateId('run'),
      ...(body.data.priority === undefined ? {} : { priority: body.data.priority }),
    });
    if (!result.ok) return errorResponse(c, 'duplicate_run', 'a run with this id exists already');
    c.header('Location', `/runs/${encodeURIComponent(result.runId)}`);
    return c.json({ runId: result.runId, status: 'queued' }, 201);
  });

  app.get('/runs', async (c) => {
    const query = listRunsQuery.safeParse(c.req.query());
    if (!query.success)
      return errorResponse(c, 'invalid_request', 'the query is not valid', {
        issues: describeIssues(query.error),
      });
    const actorId = c.get('actor').id;
    const list = await runs.list({ actorId, limit: query.data.limit ?? 50 });
    // The registry is asked for this actor's runs; a record of anyone else's is never shown anyway.
    return c.json({ runs: list.filter((record) => record.actorId === actorId) });
  });

  app.get('/runs/:id', async (c) => {
    const record = await ownRun(c);
    if (record instanceof Response) return record;
    const view: RunView = record;
    return c.json(view);
  });

  app.get('/runs/:id/events', async (c) => {
    const record = await ownRun(c);
    if (record instanceof Response) return record;
    const afterSeq = parseLastEventId(c.req.header('Last-Event-ID'));
    if (afterSeq === undefined)
      return errorResponse(
        c,
        'invalid_last_event_id',
        'Last-Event-ID must be the seq of a trace event (a whole number)',
      );
    return streamTraceEvents(c, {
      events,
      runId: record.runId,
      afterSeq,
      clock,
      heartbeatMs,
      finalState: async () => (await runs.get(record.runId)) ?? record,
      ended: record.status === 'ended',
      // Best effort: a store that fails while we wait must not cost the client the event.
      beforeRunEnd: (seq, signal) =>
        recordCaughtUp(runs, events, record.runId, seq, clock, signal).catch(() => undefined),
    });
  });

  app.post('/runs/:id/approvals', limitBody, async (c) => {
    const record = await ownRun(c);
    if (record instanceof Response) return record;
    if (readOnly) return refuseWrite(c);
    const parsed = await jsonBody(c);
    if (!parsed.ok) return parsed.response;
    const body = verdictsBody.safeParse(parsed.body);
    if (!body.success)
      return errorResponse(c, 'invalid_request', 'the verdicts are not valid', {
        issues: describeIssues(body.error),
      });
    const by = c.get('actor').id;
    const result = await queue.submitVerdicts(
      record.runId,
      body.data.verdicts.map((verdict) => ({ ...verdict, by })),
    );
    if (result.ok) return c.json({ runId: record.runId, accepted: body.data.verdicts.length }, 202);
    switch (result.reason) {
      case 'not_found':
        return errorResponse(c, 'not_found', 'no such run');
      case 'not_awaiting_approval':
        return errorResponse(c, 'not_awaiting_approval', 'the run is not waiting for a verdict');
      case 'stale_approval':
        return errorResponse(c, 'stale_approval', 'a verdict names an approval the run is not waiting on', {
          staleApprovalIds: result.staleApprovalIds ?? [],
        });
    }
  });

  app.post('/runs/:id/cancel', limitBody, async (c) => {
    const record = await ownRun(c);
    if (record instanceof Response) return record;
    if (readOnly) return refuseWrite(c);
    const result = await queue.cancel(record.runId, c.get('actor').id);
    if (result.ok) return c.json({ runId: record.runId, status: result.status }, 202);
    return result.reason === 'not_found'
      ? errorResponse(c, 'not_found', 'no such run')
      : errorResponse(c, 'already_ended', 'the run has ended already');
  });

  const viewer = options.viewer;
  if (viewer) {
    const page = async (c: Context, path: string) => {
      if (!isSafeAssetPath(path)) return errorResponse(c, 'not_found', 'no such file');
      const asset = await viewer.read(path);
      if (!asset) return errorResponse(c, 'not_found', 'no such file');
      c.header('Content-Type', asset.contentType);
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('Content-Security-Policy', viewerPolicy);
      c.header('Referrer-Policy', 'no-referrer');
      c.header('Cache-Control', path === 'index.html' ? 'no-cache' : 'public, max-age=3600');
      return c.body(typeof asset.body === 'string' ? asset.body : new Uint8Array(asset.body));
    };
    app.get('/', (c) => page(c, 'index.html'));
    app.get('/assets/:file', (c) => page(c, `assets/${c.req.param('file')}`));
  }
  return app;
}
