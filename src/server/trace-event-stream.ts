import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RunEventLog } from '../queue/run-queue.js';
import type { Clock } from '../time/clock.js';

/** What {@link streamTraceEvents} needs beside the request. */
export interface TraceEventStreamOptions {
  events: RunEventLog;
  runId: string;
  /** The `seq` the client last received; events after it are sent. */
  afterSeq: number;
  clock: Clock;
  heartbeatMs: number;
  /** The closing `end` event's data: the run's record as it stands when the trace ends. */
  finalState: () => Promise<unknown>;
  /**
   * The run had ended when the request came: its trace is read as it stands, not followed. Every
   * event of an ended run is in the log before its record ends; a log whose trace (and end marker)
   * expired before the record would otherwise keep the client waiting for an end that never comes.
   */
  ended?: boolean;
  /**
   * Awaited before a `run-end` event is sent. A worker appends a run's last events before it
   * writes the record (parks it for approval, or ends it): the service waits here until the record
   * has caught up, so a client that saw the pause finds `pendingApprovals` when it asks.
   */
  beforeRunEnd?: (seq: number, signal: AbortSignal) => Promise<void>;
}

/** The run's events after `afterSeq` as the log holds them now, a page at a time. */
async function* readAll(events: RunEventLog, runId: string, afterSeq: number, signal: AbortSignal) {
  const page = 500;
  let cursor = afterSeq;
  while (!signal.aborted) {
    const fresh = await events.read(runId, cursor, page);
    for (const event of fresh) {
      cursor = event.seq;
      yield event;
    }
    if (fresh.length < page) return;
  }
}

/**
 * The trace as Server-Sent Events: `event: trace`, `id:` the event's `seq`, `data:` the event as
 * JSON; a comment every `heartbeatMs` so proxies keep the connection; `event: end` when the run
 * ends. An event whose `seq` is not past the last one sent is dropped, so a log that replays
 * events after a worker resumed a run still reaches the client without a duplicate. A client that
 * goes away aborts the follow, which releases the log's listener.
 */
export function streamTraceEvents(c: Context, options: TraceEventStreamOptions): Response {
  const { events, runId, clock, heartbeatMs } = options;
  return streamSSE(c, async (stream) => {
    const controller = new AbortController();
    const stop = () => controller.abort();
    stream.onAbort(stop);
    const request = c.req.raw.signal;
    request.addEventListener('abort', stop, { once: true });
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const beat = () => {
      timer = clock.setTimeout(() => {
        if (controller.signal.aborted) return;
        void stream.write(': heartbeat\n\n');
        beat();
      }, heartbeatMs);
    };
    beat();
    // A write to a client that has gone may never settle: every write races the abort, so a
    // dropped client always ends the follow (and the log's listener or subscription with it).
    const gone = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve()));
    const send = (write: Promise<unknown>) => Promise.race([write, gone]);
    let lastSeq = options.afterSeq;
    try {
      await send(stream.write('retry: 2000\n\n'));
      const source = options.ended
        ? readAll(events, runId, options.afterSeq, controller.signal)
        : events.follow(runId, options.afterSeq, controller.signal);
      for await (const event of source) {
        if (controller.signal.aborted || stream.aborted) break;
        if (event.seq <= lastSeq) continue;
        lastSeq = event.seq;
        if (event.type === 'run-end' && options.beforeRunEnd)
          await send(options.beforeRunEnd(event.seq, controller.signal));
        if (controller.signal.aborted || stream.aborted) break;
        await send(stream.writeSSE({ event: 'trace', id: String(event.seq), data: JSON.stringify(event) }));
      }
      if (!controller.signal.aborted && !stream.aborted)
        await send(stream.writeSSE({ event: 'end', data: JSON.stringify(await options.finalState()) }));
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
      request.removeEventListener('abort', stop);
      controller.abort();
    }
  });
}
