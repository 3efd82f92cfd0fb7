import type { Redis } from 'ioredis';
import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { RunEventStore } from '../queue/run-stores.js';
import { traceConflict } from '../queue/trace-conflict.js';
import { writerNonce } from '../redis/writer-nonce.js';
import type { TraceEvent } from '../trace/events.js';
import { checkTtl } from './redis-run-registry.js';

// A run's events are a stream whose entry ids are `0-<seq + 1>`, so the stream itself orders and
// indexes them by seq. One script appends a batch: it checks the first event continues the
// stream's last seq (the log is authoritative), adds every entry (the last one also names the
// append's writer nonce) and publishes one notice. A batch that does not continue the stream is
// taken as applied only when it is this very append sent again (a connection that dropped before
// its reply was read, resent by the client): it ends where the stream ends and the stream's last
// entry carries its nonce. Another writer's batch, even byte for byte the same, is refused.
// KEYS: stream. ARGV: channel, first seq, writer nonce, then the events' JSON in order.
const appendScript = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local next = 0
if #last > 0 then next = tonumber(string.match(last[1][1], '%-(%d+)$')) end
local first = tonumber(ARGV[2])
local count = #ARGV - 3
if first ~= next then
  if #last > 0 and first + count == next then
    local fields = last[1][2]
    if fields[3] == 'n' and fields[4] == ARGV[3] then return {1, next} end
  end
  return {0, next}
end
for i = 4, #ARGV - 1 do
  redis.call('XADD', KEYS[1], '0-' .. (first + i - 3), 'e', ARGV[i])
end
redis.call('XADD', KEYS[1], '0-' .. (first + count), 'e', ARGV[#ARGV], 'n', ARGV[3])
redis.call('PUBLISH', ARGV[1], first + count - 1)
return {1, first + count}
`;

/** Events a follower reads per round trip. */
const followPage = 500;

/** Options for {@link RedisRunEventLog}. */
export interface RedisRunEventLogOptions {
  redis: Redis;
  /**
   * A connection for SUBSCRIBE, shared by every `follow` of this log; made with
   * `redis.duplicate()` on the first follow when absent (and closed by {@link RedisRunEventLog.close}).
   */
  subscriber?: Redis;
  /** Prefix of every key. @default 'reins' */
  prefix?: string;
  /** A follower re-reads at least this often, in case a notice was lost to a reconnect. @default 5_000 */
  pollMs?: number;
  /**
   * A run's events (and its end marker) expire this long after `end`. @default undefined (kept until deleted)
   */
  endedRunTtlMs?: number;
}

/**
 * Every run's trace in Redis: a stream per run (`<prefix>:events:<runId>`, entry id `0-<seq+1>`)
 * written a step at a time in one round trip, a pub/sub notice per append for followers, and an
 * end marker (`<prefix>:events-ended:<runId>`). A follower subscribes before it reads, and reads
 * again after every notice, so no event falls between a read and the subscription.
 */
export class RedisRunEventLog implements RunEventStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #pollMs: number;
  readonly #endedRunTtlMs: number;
  #subscriber: Redis | undefined;
  readonly #ownSubscriber: boolean;
  readonly #listeners = new Map<string, { listeners: Set<() => void>; ready: Promise<unknown> }>();
  #handling = false;

  constructor(options: RedisRunEventLogOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? 'reins';
    this.#pollMs = options.pollMs ?? 5_000;
    this.#endedRunTtlMs = checkTtl(options.endedRunTtlMs);
    this.#subscriber = options.subscriber;
    this.#ownSubscriber = options.subscriber === undefined;
  }

  #stream(runId: string): string {
    return `${this.#prefix}:events:${runId}`;
  }

  #channel(runId: string): string {
    return `${this.#prefix}:events-notice:${runId}`;
  }

  async append(runId: string, events: readonly TraceEvent[]): Promise<void> {
    const first = events[0];
    if (!first) return;
    const texts = events.map((event, index) => {
      if (event.seq !== first.seq + index) throw traceConflict(runId, first.seq + index, event.seq);
      return JSON.stringify(event);
    });
    // EVAL, not EVALSHA: an EVALSHA refused with NOSCRIPT (a restarted or flushed Redis) is sent
    // again as EVAL after its reply, behind a checkpoint commit sent after it, and `orderedBefore`
    // would not hold (test: write-behind.test.ts, SCRIPT FLUSH mid-run).
    const [ok, next] = (await this.#redis.eval(
      appendScript,
      1,
      this.#stream(runId),
      this.#channel(runId),
      first.seq,
      writerNonce(),
      ...texts,
    )) as [number, number];
    if (ok !== 1) throw traceConflict(runId, next, first.seq);
  }

  /**
   * True when `checkpoint` commits over this log's own client (a `RedisCheckpointStore` given the
   * same ioredis instance, not a Cluster): Redis applies one connection's commands in the order they
   * were sent, so an append sent before a commit is applied before it.
   */
  orderedBefore(checkpoint: AnyCheckpointStore): boolean {
    const redis = this.#redis as Redis & { isCluster?: boolean };
    return redis.isCluster !== true && (checkpoint as { connection?: unknown }).connection === redis;
  }

  async nextSeq(runId: string): Promise<number | undefined> {
    const last = await this.#redis.xrevrange(this.#stream(runId), '+', '-', 'COUNT', 1);
    const id = last[0]?.[0];
    return id === undefined ? undefined : Number(id.slice(id.indexOf('-') + 1));
  }

  async end(runId: string): Promise<void> {
    const ended = `${this.#prefix}:events-ended:${runId}`;
    const ttl = this.#endedRunTtlMs;
    const transaction = this.#redis.multi();
    if (ttl > 0) transaction.set(ended, '1', 'PX', ttl).pexpire(this.#stream(runId), ttl);
    else transaction.set(ended, '1');
    await transaction.publish(this.#channel(runId), 'end').exec();
  }

  async read(runId: string, afterSeq: number, limit?: number): Promise<TraceEvent[]> {
    const start = `0-${Math.max(1, afterSeq + 2)}`;
    const entries =
      limit === undefined
        ? await this.#redis.xrange(this.#stream(runId), start, '+')
        : await this.#redis.xrange(this.#stream(runId), start, '+', 'COUNT', limit);
    return entries.map(([, fields]) => JSON.parse(fields[1] as string) as TraceEvent);
  }

  async #ended(runId: string): Promise<boolean> {
    return (await this.#redis.exists(`${this.#prefix}:events-ended:${runId}`)) === 1;
  }

  async *follow(runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<TraceEvent> {
    let noticed = false;
    let wake: (() => void) | undefined;
    const listener = () => {
      noticed = true;
      wake?.();
    };
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    await this.#subscribe(runId, listener);
    try {
      let cursor = afterSeq;
      while (!signal.aborted) {
        noticed = false;
        // Ended is sent before the read, on the same connection, so Redis answers it first: an
        // end seen here means every event is already readable. Both go in one round trip.
        const [ended, fresh] = await Promise.all([this.#ended(runId), this.read(runId, cursor, followPage)]);
        for (const event of fresh) {
          cursor = event.seq;
          yield event;
          if (signal.aborted) return;
        }
        // A full page may have more behind it. Otherwise the read saw every event appended before
        // it: a later append publishes its notice after it is applied, which sets `noticed` (now or
        // while this follower waits), so reading again without one would only find nothing.
        if (fresh.length === followPage) continue;
        if (ended) return;
        if (noticed) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      await this.#unsubscribe(runId, listener);
    }
  }

  async #subscribe(runId: string, listener: () => void): Promise<void> {
    if (!this.#subscriber) this.#subscriber = this.#redis.duplicate();
    const subscriber = this.#subscriber;
    if (!this.#handling) {
      this.#handling = true;
      subscriber.on('message', (channel: string) => {
        const runId = channel.slice(`${this.#prefix}:events-notice:`.length);
        for (const notify of this.#listeners.get(runId)?.listeners ?? []) notify();
      });
    }
    let entry = this.#listeners.get(runId);
    if (!entry) {
      entry = { listeners: new Set(), ready: subscriber.subscribe(this.#channel(runId)) };
      this.#listeners.set(runId, entry);
    }
    entry.listeners.add(listener);
    // Every follower of the run waits for the one SUBSCRIBE before its first read.
    await entry.ready;
  }

  async #unsubscribe(runId: string, listener: () => void): Promise<void> {
    const entry = this.#listeners.get(runId);
    if (!entry) return;
    entry.listeners.delete(listener);
    if (entry.listeners.size > 0) return;
    this.#listeners.delete(runId);
    await this.#subscriber?.unsubscribe(this.#channel(runId));
  }

  /** Closes the subscriber connection this log made (not the `redis` it was given). */
  async close(): Promise<void> {
    if (this.#ownSubscriber && this.#subscriber) {
      this.#subscriber.disconnect();
      this.#subscriber = undefined;
      // A follow after close makes a new subscriber: it needs its own message handler.
      this.#handling = false;
    }
  }
}
