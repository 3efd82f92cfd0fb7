import type { Pool } from 'pg';
import type { RunEventStore, RunProgress, RunRecordStore } from '../queue/run-stores.js';
import { traceConflict } from '../queue/trace-conflict.js';
import type { TraceEvent } from '../trace/events.js';
import { PostgresListener } from './listener.js';
import { PostgresRunRegistry } from './postgres-run-registry.js';
import {
  connectionLost,
  createTablesSql,
  jsonbText,
  once,
  type RunTables,
  retryingRead,
  runTables,
} from './tables.js';

/** Options of {@link PostgresRunEventLog}. */
export interface PostgresRunEventLogOptions {
  /** A `pg.Pool`: appends and reads take a connection each; a follower's LISTEN holds one for the log. */
  pool: Pick<Pool, 'query' | 'connect'>;
  /** The same `table` as the run registry's: the trace goes in `<table>_events`. @default 'reins_runs' */
  table?: string;
  /** @default the connection's search_path */
  schema?: string;
  /** Create the tables on first use when missing. @default true */
  createTables?: boolean;
  /** A follower reads again at least this often, in case a notification was lost. @default 5_000 */
  pollMs?: number;
}

/** Events read per query by a follower. */
const followPage = 500;
const uniqueViolation = '23505';
/** Tries of one append after its connection was lost (50, 100, … 1,600 ms apart). */
const appendAttempts = 6;

/**
 * Run traces in PostgreSQL, one row per event (`<table>_events`, keyed by run and `seq`), for a
 * deployment without Redis. `append` is one statement: its events are written only when the first
 * continues the run's `seq` (the key refuses a concurrent writer of the same `seq`), else it throws
 * `trace_conflict`; the statement also sends a notification on the log's channel, which PostgreSQL
 * delivers when it commits. `follow` LISTENs (one connection per log, shared by its followers),
 * reads after every notification and every `pollMs`, and ends after the run's end marker
 * (`<table>_ended`): the marker and the events are read in one statement, so an end seen means every
 * event before it is read.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { PostgresRunEventLog } from 'reins/pgboss';
 *
 * const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
 * const log = new PostgresRunEventLog({ pool, schema: 'agents' });
 * const runId = `run-${Date.now()}`;
 * await log.append(runId, [{ v: 1, type: 'step-start', runId, seq: 0, at: Date.now(), step: 1, contextTokens: 0, billedTokens: 0, costUsd: 0, toolsEnabled: true }]);
 * await log.end(runId);
 * for await (const event of log.follow(runId, -1, AbortSignal.timeout(5_000))) console.log(event.type);
 * await log.close();
 * await pool.end();
 * ```
 */
export class PostgresRunEventLog implements RunEventStore {
  readonly tables: RunTables;
  readonly #pool: Pick<Pool, 'query' | 'connect'>;
  readonly #ensure: () => Promise<void>;
  readonly #createTables: boolean;
  readonly #pollMs: number;
  #listener: PostgresListener | undefined;
  /** Followers by run id: each is told of a notification for its run. */
  readonly #followers = new Map<string, Set<() => void>>();
  #listening: Promise<unknown> | undefined;

  constructor(options: PostgresRunEventLogOptions) {
    this.tables = runTables(options.table, options.schema);
    this.#pool = options.pool;
    this.#createTables = options.createTables ?? true;
    this.#pollMs = options.pollMs ?? 5_000;
    this.#ensure = once(async () => {
      await this.#pool.query(createTablesSql(this.tables));
    });
  }

  /** Creates the schema and tables if missing. */
  ensureSchema(): Promise<void> {
    return this.#ensure();
  }

  async #ready(): Promise<void> {
    if (this.#createTables) await this.#ensure();
  }

  /** True when `registry` keeps its records in this log's tables: an append then sets the run's progress. */
  recordsProgress(registry: RunRecordStore): boolean {
    return registry instanceof PostgresRunRegistry && registry.tables.key === this.tables.key;
  }

  async append(runId: string, events: readonly TraceEvent[], progress?: RunProgress): Promise<void> {
    const first = events[0];
    if (first === undefined) return;
    await this.#ready();
    const seqs = events.map((event) => event.seq);
    const texts = events.map((event) => JSON.stringify(event));
    for (let index = 1; index < seqs.length; index++)
      if (seqs[index] !== first.seq + index)
        throw traceConflict(runId, first.seq + index, seqs[index] as number);
    const sql = `WITH head AS (
           SELECT coalesce(max(seq), -1) + 1 AS next FROM ${this.tables.events} WHERE run_id = $1
         ), written AS (
           INSERT INTO ${this.tables.events} (run_id, seq, event)
           SELECT $1, e.seq, e.event::json FROM unnest($2::int[], $3::text[]) AS e(seq, event), head
           WHERE head.next = $4
           RETURNING seq
         ), progress AS (
           UPDATE ${this.tables.runs} SET record = record || $6::jsonb
           WHERE run_id = $1 AND status <> 'ended' AND $6::jsonb IS NOT NULL AND EXISTS (SELECT 1 FROM written)
         )
         SELECT (SELECT count(*) FROM written) AS written, (SELECT next FROM head) AS next,
                (SELECT count(*) FROM (SELECT pg_notify($5, $1) WHERE EXISTS (SELECT 1 FROM written)) n) AS notified`;
    const values = [
      runId,
      seqs,
      texts,
      first.seq,
      this.tables.eventsChannel,
      progress ? jsonbText(JSON.stringify(progress)) : null,
    ];
    for (let attempt = 0; ; attempt++) {
      let result: { rows: { written: string; next: number }[] };
      try {
        result = await this.#pool.query(sql, values);
      } catch (error) {
        // Another writer put the same seq in first, between this statement's read and its insert.
        if ((error as { code?: string }).code === uniqueViolation) {
          if (await this.#holds(runId, first.seq, texts)) return;
          const next = (await this.nextSeq(runId)) ?? 0;
          throw traceConflict(runId, next, first.seq);
        }
        // The connection went (a restart, a failover) with the statement in flight: it may have been
        // applied. Try again on another connection; a try that finds these very events already there
        // takes the append as done.
        if (connectionLost(error) && attempt < appendAttempts) {
          await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
          continue;
        }
        throw error;
      }
      const row = result.rows[0];
      if (row && Number(row.written) === events.length) return;
      if (attempt > 0 && (await this.#holds(runId, first.seq, texts))) return;
      throw traceConflict(runId, row?.next ?? 0, first.seq);
    }
  }

  /**
   * True when the log holds exactly these events from `firstSeq` on: an append whose reply was lost
   * and that was applied. Events carry their run, seq and time, so another worker's are not the same text.
   */
  async #holds(runId: string, firstSeq: number, texts: readonly string[]): Promise<boolean> {
    const result = await this.#pool.query<{ event: string }>(
      `SELECT event::text AS event FROM ${this.tables.events} WHERE run_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [runId, firstSeq, firstSeq + texts.length],
    );
    return (
      result.rows.length === texts.length && result.rows.every((row, index) => row.event === texts[index])
    );
  }

  async nextSeq(runId: string): Promise<number | undefined> {
    await this.#ready();
    const result = await retryingRead(() =>
      this.#pool.query<{ next: number | null }>(
        `SELECT max(seq) + 1 AS next FROM ${this.tables.events} WHERE run_id = $1`,
        [runId],
      ),
    );
    return result.rows[0]?.next ?? undefined;
  }

  async end(runId: string): Promise<void> {
    await this.#ready();
    await this.#pool.query(
      `WITH marked AS (INSERT INTO ${this.tables.ended} (run_id) VALUES ($1) ON CONFLICT DO NOTHING)
       SELECT pg_notify($2, $1)`,
      [runId, this.tables.eventsChannel],
    );
  }

  async read(runId: string, afterSeq: number, limit = 10_000): Promise<TraceEvent[]> {
    return (await this.#readWithEnd(runId, afterSeq, limit)).events;
  }

  /** Events after `afterSeq` and whether the run has ended, from one snapshot. */
  async #readWithEnd(
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ events: TraceEvent[]; ended: boolean }> {
    await this.#ready();
    const result = await retryingRead(() =>
      this.#pool.query<{ ended: boolean; events: TraceEvent[] }>(
        // An ended record is the end too: its end marker may never have been written (the process
        // died between the two, and the retried job found the run ended and did nothing).
        `SELECT (EXISTS (SELECT 1 FROM ${this.tables.ended} WHERE run_id = $1)
               OR EXISTS (SELECT 1 FROM ${this.tables.runs} WHERE run_id = $1 AND status = 'ended')) AS ended,
              coalesce((SELECT json_agg(page.event ORDER BY page.seq) FROM (
                SELECT seq, event FROM ${this.tables.events} WHERE run_id = $1 AND seq > $2
                ORDER BY seq LIMIT $3) page), '[]'::json) AS events`,
        [runId, afterSeq, limit],
      ),
    );
    const row = result.rows[0];
    return { events: row?.events ?? [], ended: row?.ended ?? false };
  }

  async *follow(runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<TraceEvent> {
    // Bumped by every notification for the run (and a reconnect): a read that started before the
    // bump may have missed what it announced, so the follower reads again instead of waiting.
    let notices = 0;
    let wake: (() => void) | undefined;
    const notify = () => {
      notices++;
      wake?.();
    };
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    let followers = this.#followers.get(runId);
    if (!followers) {
      followers = new Set();
      this.#followers.set(runId, followers);
    }
    followers.add(notify);
    try {
      await this.#listen();
      let cursor = afterSeq;
      while (!signal.aborted) {
        const seen = notices;
        const { events, ended } = await this.#readWithEnd(runId, cursor, followPage);
        for (const event of events) {
          if (event.seq <= cursor) continue;
          cursor = event.seq;
          yield event;
          if (signal.aborted) return;
        }
        if (events.length === followPage) continue;
        if (ended) return;
        if (notices !== seen) continue;
        if (signal.aborted) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        // A connection lost meanwhile is made again before the next wait (and reads once it is).
        await this.#listener?.ensure().catch(() => {});
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      followers.delete(notify);
      if (followers.size === 0) this.#followers.delete(runId);
    }
  }

  async #listen(): Promise<void> {
    if (!this.#listener) {
      const listener = new PostgresListener(this.#pool);
      this.#listener = listener;
      // A notification sent while the connection was away is lost: every follower reads again.
      listener.onReconnect(() => {
        for (const followers of this.#followers.values()) for (const notify of followers) notify();
      });
    }
    this.#listening ??= this.#listener
      .listen(this.tables.eventsChannel, (runId) => {
        for (const notify of this.#followers.get(runId) ?? []) notify();
      })
      .catch((error: unknown) => {
        this.#listening = undefined;
        throw error;
      });
    await this.#listening;
  }

  /** Closes the listening connection (followers still running go by their poll). */
  async close(): Promise<void> {
    const listener = this.#listener;
    this.#listener = undefined;
    this.#listening = undefined;
    await listener?.close();
  }
}
