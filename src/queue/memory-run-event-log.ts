import type { TraceEvent } from '../trace/events.js';
import type { RunEventStore } from './run-stores.js';
import { traceConflict } from './trace-conflict.js';

interface RunLog {
  events: TraceEvent[];
  ended: boolean;
  /** Followers waiting for the next append or the end. */
  waiting: Set<() => void>;
}

/**
 * Every run's trace in this process's memory, with live followers: for tests, a single-process
 * service and the in-process queue. Authoritative for `seq` like the Redis log (see {@link RunEventStore}).
 */
export class MemoryRunEventLog implements RunEventStore {
  readonly #runs = new Map<string, RunLog>();

  #log(runId: string): RunLog {
    let log = this.#runs.get(runId);
    if (!log) {
      log = { events: [], ended: false, waiting: new Set() };
      this.#runs.set(runId, log);
    }
    return log;
  }

  async append(runId: string, events: readonly TraceEvent[]): Promise<void> {
    if (events.length === 0) return;
    const log = this.#log(runId);
    let next = nextOf(log.events);
    for (const event of events) {
      if (event.seq !== next) throw traceConflict(runId, next, event.seq);
      next++;
    }
    for (const event of events) log.events.push(structuredClone(event));
    wake(log);
  }

  /** An append is applied when it is called, before anything the caller does next. */
  orderedBefore(): boolean {
    return true;
  }

  async nextSeq(runId: string): Promise<number | undefined> {
    const events = this.#runs.get(runId)?.events;
    return events && events.length > 0 ? nextOf(events) : undefined;
  }

  async end(runId: string): Promise<void> {
    const log = this.#log(runId);
    log.ended = true;
    wake(log);
  }

  async read(runId: string, afterSeq: number, limit = Number.POSITIVE_INFINITY): Promise<TraceEvent[]> {
    return this.#readNow(runId, afterSeq, limit);
  }

  #readNow(runId: string, afterSeq: number, limit: number): TraceEvent[] {
    const events = this.#runs.get(runId)?.events ?? [];
    const out: TraceEvent[] = [];
    // seq runs 0, 1, 2 … with no gap (appends check it), so the index is the seq.
    for (let i = Math.max(0, afterSeq + 1); i < events.length && out.length < limit; i++)
      out.push(structuredClone(events[i] as TraceEvent));
    return out;
  }

  async *follow(runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<TraceEvent> {
    let cursor = afterSeq;
    while (!signal.aborted) {
      // Read and start waiting in one synchronous section: no append can fall between the two.
      const log = this.#log(runId);
      const fresh = this.#readNow(runId, cursor, Number.POSITIVE_INFINITY);
      const ended = log.ended;
      let woken: (() => void) | undefined;
      const next =
        fresh.length === 0 && !ended
          ? new Promise<void>((resolve) => {
              woken = resolve;
              log.waiting.add(resolve);
            })
          : undefined;
      for (const event of fresh) {
        cursor = event.seq;
        yield event;
      }
      if (fresh.length === 0 && ended) return;
      if (next && woken) {
        const onAbort = woken;
        signal.addEventListener('abort', onAbort, { once: true });
        await next;
        signal.removeEventListener('abort', onAbort);
        log.waiting.delete(woken);
      }
    }
  }
}

function nextOf(events: readonly TraceEvent[]): number {
  const last = events[events.length - 1];
  return last === undefined ? 0 : last.seq + 1;
}

function wake(log: RunLog): void {
  const waiting = [...log.waiting];
  log.waiting.clear();
  for (const resolve of waiting) resolve();
}
