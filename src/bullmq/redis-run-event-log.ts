import type { Redis } from 'ioredis';
import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { RunEventStore, RunProgress, RunRecordStore } from '../queue/run-stores.js';
import { traceConflict } from '../queue/trace-conflict.js';
import { coalesceWrites } from '../redis/coalesce-writes.js';
import { writerNonce } from '../redis/writer-nonce.js';
import type { TraceEvent } from '../trace/events.js';
import {
  checkTtl,
  progressFields,
  type RedisRunRegistry,
  recordKey,
  tombstoneKey,
} from './redis-run-registry.js';

// A run's events are a stream whose entry ids are `0-<seq + 1>`, so the stream itself orders and
// indexes them by seq. One script appends a batch: it checks the first event continues the
// stream's last seq (the log is authoritative), adds every entry (the last one also names the
// append's writer nonce) and publishes one notice. A batch that does not continue the stream is
// taken as applied only when it is this very append sent again (a connection that dropped before
// its reply was read, resent by the client): it ends where the stream ends and the stream's last
// entry carries its nonce. Another writer's batch, even byte for byte the same, is refused.
// The notice carries the batch (`e<db>.<first seq>` then each event's JSON, one per line: JSON text
// holds no raw newline) when it is small enough, so a follower that is caught up takes the events
// from it instead of reading them back; a larger batch's notice is its last seq, and followers read.
// Channels are server-wide, not per database: the database number in the header keeps a follower
// from taking a batch that another database's log (same prefix, same run id) appended.
// With a record key, the batch's progress figures (the run's step count and bill) are set on the
// run's record in the same script, when the record exists and has not ended (a deleted or expired
// one is not remade; a late append of a worker whose run was ended under it leaves the end as is).
// KEYS: stream[, record]. ARGV: channel, first seq, writer nonce, carry (the database number: the
// notice carries the batch; '-': it does not), m, m record field/value strings, then the events'
// JSON in order.
const appendScript = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local next = 0
if #last > 0 then next = tonumber(string.match(last[1][1], '%-(%d+)$')) end
local first = tonumber(ARGV[2])
local m = tonumber(ARGV[5])
local t0 = 6 + m
local count = #ARGV - t0 + 1
if first ~= next then
  if #last > 0 and first + count == next then
    local fields = last[1][2]
    if fields[3] == 'n' and fields[4] == ARGV[3] then return {1, next} end
  end
  return {0, next}
end
for i = t0, #ARGV - 1 do
  redis.call('XADD', KEYS[1], '0-' .. (first + i - t0 + 1), 'e', ARGV[i])
end
redis.call('XADD', KEYS[1], '0-' .. (first + count), 'e', ARGV[#ARGV], 'n', ARGV[3])
if m > 0 then
  local status = redis.call('HGET', KEYS[2], 'status')
  if status and status ~= 'ended' then redis.call('HSET', KEYS[2], unpack(ARGV, 6, 5 + m)) end
end
if ARGV[4] ~= '-' then
  redis.call('PUBLISH', ARGV[1], 'e' .. ARGV[4] .. '.' .. first .. '\\n' .. table.concat(ARGV, '\\n', t0))
else
  redis.call('PUBLISH', ARGV[1], first + count - 1)
end
return {1, first + count}
`;

/**
 * A notice carries its batch up to this many UTF-16 units of event JSON (at most 24 KiB of UTF-8),
 * a typical step: larger ones (a big tool result) go by the stream. Notices queue in the Redis
 * output buffer of every subscriber, which Redis closes past `client-output-buffer-limit pubsub`
 * (32 MB by default); a subscriber that stalls must not get there on carried batches.
 */
const carryLimit = 8 * 1024;

/** Notices a follower holds while its consumer is busy; past this it reads the stream instead. */
const maxPendingNotices = 32;

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
  /**
   * The registry whose records this log's appends keep current (same client and prefix): an append
   * handed a step's progress sets it on the run's record in the same script (see
   * {@link RunEventStore.recordsProgress}). `createRunWorker` passes its own.
   */
  records?: RedisRunRegistry;
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
  readonly #records: RedisRunRegistry | undefined;
  /** The database the client selected: carried notices name it (pub/sub channels span databases). */
  readonly #db: number;
  #subscriber: Redis | undefined;
  readonly #ownSubscriber: boolean;
  readonly #listeners = new Map<
    string,
    {
      listeners: Set<(notice: string) => void>;
      ready: Promise<unknown>;
      /** Redis confirmed the SUBSCRIBE: its followers may have read, and may miss notices on a reconnect. */
      confirmed: boolean;
    }
  >();
  #handling = false;

  constructor(options: RedisRunEventLogOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? 'reins';
    this.#pollMs = options.pollMs ?? 5_000;
    this.#endedRunTtlMs = checkTtl(options.endedRunTtlMs);
    this.#records = options.records;
    this.#db = (this.#redis.options as { db?: number } | undefined)?.db ?? 0;
    if (this.#records && this.#records.prefix !== this.#prefix)
      throw new ConfigurationError('records', 'must use the same prefix as the log');
    if (this.#records && this.#records.connection !== this.#redis)
      throw new ConfigurationError('records', 'must use the same Redis client as the log');
    this.#subscriber = options.subscriber;
    this.#ownSubscriber = options.subscriber === undefined;
  }

  #stream(runId: string): string {
    return `${this.#prefix}:events:${runId}`;
  }

  #channel(runId: string): string {
    return `${this.#prefix}:events-notice:${runId}`;
  }

  async append(runId: string, events: readonly TraceEvent[], progress?: RunProgress): Promise<void> {
    const first = events[0];
    if (!first) return;
    const texts = events.map((event, index) => {
      if (event.seq !== first.seq + index) throw traceConflict(runId, first.seq + index, event.seq);
      return JSON.stringify(event);
    });
    let size = 0;
    for (const text of texts) size += text.length;
    // On a Cluster the record's key is in another slot: the record is updated beside the append.
    const fields =
      progress && this.#records && !(this.#redis as { isCluster?: boolean }).isCluster
        ? progressFields(progress)
        : [];
    // EVAL, not EVALSHA: an EVALSHA refused with NOSCRIPT (a restarted or flushed Redis) is sent
    // again as EVAL after its reply, behind a checkpoint commit sent after it, and `orderedBefore`
    // would not hold (test: write-behind.test.ts, SCRIPT FLUSH mid-run).
    // Sent with whatever follows in this turn: in write-behind, the step's checkpoint commit.
    coalesceWrites(this.#redis);
    const [ok, next] = (await this.#redis.eval(
      appendScript,
      fields.length > 0 ? 2 : 1,
      this.#stream(runId),
      ...(fields.length > 0 ? [recordKey(this.#prefix, runId)] : []),
      this.#channel(runId),
      first.seq,
      writerNonce(),
      size <= carryLimit ? this.#db : '-',
      fields.length,
      ...fields,
      ...texts,
    )) as [number, number];
    if (ok !== 1) throw traceConflict(runId, next, first.seq);
  }

  /** True for the registry this log was made with (`records`), on one Redis (not a Cluster: two keys). */
  recordsProgress(registry: RunRecordStore): boolean {
    const redis = this.#redis as Redis & { isCluster?: boolean };
    return redis.isCluster !== true && this.#records !== undefined && registry === this.#records;
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

  /**
   * Whether the run's trace will not grow: its end marker is there, or its record (kept under the
   * same prefix by `RedisRunRegistry`) has ended, or the record is gone while the run id's
   * tombstone stays (it expired: its trace and end marker expire too, and a follower waiting for
   * them would wait forever). The record is written `ended` after the run's last append and before
   * the end marker, so an ended record means every event is readable. Three reads sent together.
   */
  async #ended(runId: string): Promise<boolean> {
    const [marker, status, tombstone] = await Promise.all([
      this.#redis.exists(`${this.#prefix}:events-ended:${runId}`),
      this.#redis.hget(recordKey(this.#prefix, runId), 'status'),
      this.#redis.exists(tombstoneKey(this.#prefix, runId)),
    ]);
    return marker === 1 || status === 'ended' || (status === null && tombstone === 1);
  }

  async *follow(runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<TraceEvent> {
    // Notices received and not yet taken, in the order Redis published them.
    const notices: string[] = [];
    let wake: (() => void) | undefined;
    const listener = (notice: string) => {
      // A consumer that does not keep up (a page on a slow connection) would have every carried
      // batch held here: past a few, they are dropped for one read of the stream, which has them.
      if (notices.length >= maxPendingNotices) {
        notices.length = 0;
        notices.push('');
      }
      notices.push(notice);
      wake?.();
    };
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    await this.#subscribe(runId, listener);
    try {
      let cursor = afterSeq;
      let read = true;
      while (!signal.aborted) {
        if (read) {
          // Notices so far are covered by this read (each is published after its append is applied);
          // any that land while it is in flight are kept, and their events skipped if it had them.
          notices.length = 0;
          // Ended is asked before the read, on the same connection, so Redis answers it first: an
          // end seen here means every event is already readable. All go in one round trip.
          const [ended, fresh] = await Promise.all([
            this.#ended(runId),
            this.read(runId, cursor, followPage),
          ]);
          for (const event of fresh) {
            if (event.seq <= cursor) continue;
            cursor = event.seq;
            yield event;
            if (signal.aborted) return;
          }
          // A full page may have more behind it.
          if (fresh.length === followPage) continue;
          if (ended) return;
          read = false;
        }
        // The read saw every event appended before it: each later append publishes a notice after it
        // is applied. A notice that carries its batch continuing the cursor is taken as it is; any
        // other (an end, a large batch, a gap left by a notice lost to a reconnect) means read again.
        while (!read && notices.length > 0) {
          const batch = carried(notices.shift() as string, this.#db);
          if (!batch) read = true;
          else if (batch.first > cursor + 1) read = true;
          else
            for (let index = cursor + 1 - batch.first; index < batch.texts.length; index++) {
              const event = parsed(batch.texts[index] as string);
              if (event?.seq !== batch.first + index) {
                read = true;
                break;
              }
              cursor = event.seq;
              yield event;
              if (signal.aborted) return;
            }
        }
        if (read) continue;
        // An abort that landed while the read was in flight found no waiter to wake: look now.
        if (signal.aborted) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            // No notice for a while: one may have been lost to a reconnect.
            read = true;
            resolve();
          }, this.#pollMs);
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

  async #subscribe(runId: string, listener: (notice: string) => void): Promise<void> {
    if (!this.#subscriber) this.#subscriber = this.#redis.duplicate();
    const subscriber = this.#subscriber;
    if (!this.#handling) {
      this.#handling = true;
      const channelPrefix = `${this.#prefix}:events-notice:`;
      // A subscriber may be shared by logs of other prefixes: their notices are not this log's.
      subscriber.on('message', (channel: string, notice: string) => {
        if (!channel.startsWith(channelPrefix)) return;
        const runId = channel.slice(channelPrefix.length);
        for (const notify of this.#listeners.get(runId)?.listeners ?? []) notify(notice);
      });
      // Notices published while the subscriber was away are lost: each time it is ready (again),
      // the channels of runs whose followers were already subscribed are subscribed once more and,
      // when Redis has confirmed them, those followers read the stream instead of waiting for their
      // poll. That includes the first `ready`: a SUBSCRIBE sent while the connection is still in its
      // handshake (ioredis writes it at once) is confirmed, then fails ioredis's ready check, which
      // drops and remakes the connection before the first `ready`, and what was published in
      // between was lost all the same. (Followers whose SUBSCRIBE waited for `ready` read after it.)
      subscriber.on('ready', () => {
        const runIds = [...this.#listeners].filter(([, entry]) => entry.confirmed).map(([runId]) => runId);
        if (runIds.length === 0) return;
        subscriber.subscribe(...runIds.map((runId) => this.#channel(runId))).then(
          () => {
            for (const runId of runIds)
              for (const notify of this.#listeners.get(runId)?.listeners ?? []) notify('');
          },
          // The connection went again: its next `ready` does this again.
          () => {},
        );
      });
    }
    let entry = this.#listeners.get(runId);
    if (!entry) {
      const made: { listeners: Set<(notice: string) => void>; ready: Promise<unknown>; confirmed: boolean } =
        {
          listeners: new Set(),
          ready: subscriber.subscribe(this.#channel(runId)),
          confirmed: false,
        };
      made.ready.then(
        () => {
          made.confirmed = true;
        },
        () => {},
      );
      entry = made;
      this.#listeners.set(runId, entry);
    }
    entry.listeners.add(listener);
    // Every follower of the run waits for the one SUBSCRIBE before its first read.
    await entry.ready;
  }

  async #unsubscribe(runId: string, listener: (notice: string) => void): Promise<void> {
    const entry = this.#listeners.get(runId);
    if (!entry) return;
    entry.listeners.delete(listener);
    if (entry.listeners.size > 0) return;
    this.#listeners.delete(runId);
    await this.#subscriber?.unsubscribe(this.#channel(runId));
  }

  /** Closes the subscriber connection this log made (not the `redis` it was given). */
  async close(): Promise<void> {
    // Followers still running lose their notices with the subscriber: each reads the stream once
    // more, then goes by its poll. A follow after close subscribes again on a new subscriber.
    const runIds = [...this.#listeners.keys()];
    const entries = [...this.#listeners.values()];
    this.#listeners.clear();
    for (const entry of entries) for (const notify of entry.listeners) notify('');
    if (!this.#ownSubscriber && runIds.length > 0)
      // A subscriber shared with others stays: drop this log's channels from it.
      await this.#subscriber?.unsubscribe(...runIds.map((runId) => this.#channel(runId))).catch(() => {});
    if (this.#ownSubscriber && this.#subscriber) {
      this.#subscriber.disconnect();
      this.#subscriber = undefined;
      // A follow after close makes a new subscriber: it needs its own message handler.
      this.#handling = false;
    }
  }
}

/**
 * The batch a notice carries (`e<db>.<first seq>` and one event's JSON per line) when it was
 * appended in database `db`, or `undefined` for any other notice (the follower reads the stream).
 */
function carried(notice: string, db: number): { first: number; texts: string[] } | undefined {
  if (!notice.startsWith('e')) return undefined;
  const lines = notice.split('\n');
  const header = /^e(\d+)\.(\d+)$/.exec(lines[0] as string);
  if (!header || Number(header[1]) !== db || lines.length < 2) return undefined;
  const first = Number(header[2]);
  if (!Number.isSafeInteger(first)) return undefined;
  return { first, texts: lines.slice(1) };
}

/** A carried event's JSON, or `undefined` when it is not an event (read the stream instead). */
function parsed(text: string): TraceEvent | undefined {
  try {
    const event = JSON.parse(text) as TraceEvent | null;
    return typeof event === 'object' && event !== null ? event : undefined;
  } catch {
    return undefined;
  }
}
