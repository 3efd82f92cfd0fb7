import type { Redis } from 'ioredis';
import { ConfigurationError } from '../errors/reins-error.js';
import type { RunRecord, RunRecordStatus, RunRequest } from '../queue/run-queue.js';
import type { RunProgress, RunRecordPatch, RunRecordStore } from '../queue/run-stores.js';
import { coalesceWrites } from '../redis/coalesce-writes.js';

// A run is a hash: one field per record field, each JSON, plus `request` (the queued request, so a
// resume job can be built from the record alone). `status` is plain text so Lua can compare it.
// Every run id also leaves a tombstone (`<prefix>:run-id:<id>`, a few bytes, never expiring), so an
// id stays refused after its record expired. Creating prunes the actor index's two oldest entries
// whose records expired, so the index does not grow with ended runs nobody lists.
// KEYS: hash, actor index, tombstone. ARGV: runId, createdAt, record key prefix, then field/value pairs.
const createScript = `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('SET', KEYS[3], '1')
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, 1)) do
  if redis.call('EXISTS', ARGV[3] .. id) == 0 then redis.call('ZREM', KEYS[2], id) end
end
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[1])
return 1
`;

// KEYS: hash. ARGV: TTL in ms for a record that becomes ended (0: none; set when it becomes ended,
// not re-armed by later writes), number of allowed
// statuses n, the n statuses, number of fields to delete m, the m fields, then field/value pairs to
// set. Returns the hash after the change, or false.
const updateScript = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local n = tonumber(ARGV[2])
if n > 0 then
  local status = redis.call('HGET', KEYS[1], 'status')
  local allowed = false
  for i = 3, n + 2 do if ARGV[i] == status then allowed = true end end
  if not allowed then return false end
end
local m = tonumber(ARGV[n + 3])
if m > 0 then redis.call('HDEL', KEYS[1], unpack(ARGV, n + 4, n + 3 + m)) end
local before = redis.call('HGET', KEYS[1], 'status')
if #ARGV > n + 3 + m then redis.call('HSET', KEYS[1], unpack(ARGV, n + 4 + m)) end
local ttl = tonumber(ARGV[1])
if ttl > 0 and before ~= 'ended' and redis.call('HGET', KEYS[1], 'status') == 'ended' then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return redis.call('HGETALL', KEYS[1])
`;

// KEYS: hash. ARGV: updatedAt (JSON), then the allowed statuses. Sets status running, counts the
// attempt, returns the hash after the change, or false.
const startScript = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return false end
local allowed = false
for i = 2, #ARGV do if ARGV[i] == status then allowed = true end end
if not allowed then return false end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'status', 'running', 'updatedAt', ARGV[1])
return redis.call('HGETALL', KEYS[1])
`;

/** Options for {@link RedisRunRegistry}. */
export interface RedisRunRegistryOptions {
  redis: Redis;
  /** Prefix of every key. @default 'reins' */
  prefix?: string;
  /**
   * A record expires this long after its run ends (status `ended`; a run parked for a person does
   * not expire). Listings drop expired runs. The run id stays refused: each id keeps a tombstone of a
   * few bytes that does not expire. Keep it as long as the checkpoint store's
   * `endedRunTtlMs` or longer, or a run whose record is gone still has a checkpoint.
   * @default undefined (kept until deleted)
   */
  endedRunTtlMs?: number;
}

/**
 * Run records in Redis, shared by every worker and the service: a hash per run (`<prefix>:run:<id>`)
 * and a sorted set per actor (`<prefix>:actor-runs:<actorId>`, by creation time) for listings.
 * `update` with `from` is a compare-and-set on the status, in one Lua script.
 */
export class RedisRunRegistry implements RunRecordStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #endedRunTtlMs: number;

  constructor(options: RedisRunRegistryOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? 'reins';
    this.#endedRunTtlMs = checkTtl(options.endedRunTtlMs);
  }

  #key(runId: string): string {
    return recordKey(this.#prefix, runId);
  }

  /** Prefix of every key. */
  get prefix(): string {
    return this.#prefix;
  }

  /** The client the records are kept over (a log folding progress in must share it). */
  get connection(): Redis {
    return this.#redis;
  }

  /** The run's record hash (for a log that writes progress to it in its own script). */
  recordKey(runId: string): string {
    return this.#key(runId);
  }

  async create(record: RunRecord, request?: RunRequest): Promise<boolean> {
    const pairs = toPairs(record);
    if (request) pairs.push('request', JSON.stringify(request));
    const created = await this.#redis.eval(
      createScript,
      3,
      this.#key(record.runId),
      `${this.#prefix}:actor-runs:${record.actorId}`,
      tombstoneKey(this.#prefix, record.runId),
      record.runId,
      record.createdAt,
      this.#key(''),
      ...pairs,
    );
    return created === 1;
  }

  /** The request a run was queued with, for building its resume job. */
  async request(runId: string): Promise<RunRequest | undefined> {
    const text = await this.#redis.hget(this.#key(runId), 'request');
    return text === null ? undefined : (JSON.parse(text) as RunRequest);
  }

  async update(
    runId: string,
    patch: RunRecordPatch,
    from?: readonly RunRecordStatus[],
  ): Promise<RunRecord | undefined> {
    // No status is one of none: refused, as the memory registry does (the script reads 0 as "any").
    if (from?.length === 0) return undefined;
    const removed: string[] = [];
    const set: string[] = [];
    for (const [field, value] of Object.entries(patch)) {
      if (value === undefined) removed.push(field);
      else set.push(field, fieldText(field, value));
    }
    const reply = (await this.#redis.eval(
      updateScript,
      1,
      this.#key(runId),
      this.#endedRunTtlMs,
      from?.length ?? 0,
      ...(from ?? []),
      removed.length,
      ...removed,
      ...set,
    )) as string[] | null;
    return reply ? fromPairs(reply) : undefined;
  }

  async start(runId: string, at: number, from: readonly RunRecordStatus[]): Promise<RunRecord | undefined> {
    // Sent with the checkpoint load the executor asks for beside it.
    coalesceWrites(this.#redis);
    const reply = (await this.#redis.eval(startScript, 1, this.#key(runId), JSON.stringify(at), ...from)) as
      | string[]
      | null;
    return reply ? fromPairs(reply) : undefined;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const hash = await this.#redis.hgetall(this.#key(runId));
    return Object.keys(hash).length === 0 ? undefined : fromHash(hash);
  }

  async list(filter: { actorId: string; limit?: number }): Promise<RunRecord[]> {
    const index = `${this.#prefix}:actor-runs:${filter.actorId}`;
    const limit = filter.limit ?? 50;
    const records: RunRecord[] = [];
    // Read on past runs whose record expired (and drop them from the index) until the page is full.
    for (let start = 0; records.length < limit; ) {
      const ids = await this.#redis.zrevrange(index, start, start + limit - records.length - 1);
      if (ids.length === 0) break;
      const pipeline = this.#redis.pipeline();
      for (const id of ids) pipeline.hgetall(this.#key(id));
      const replies = (await pipeline.exec()) ?? [];
      const expired: string[] = [];
      replies.forEach(([error, hash], position) => {
        if (error) return;
        if (!hash || Object.keys(hash as object).length === 0) expired.push(ids[position] as string);
        else records.push(fromHash(hash as Record<string, string>));
      });
      if (expired.length > 0) await this.#redis.zrem(index, ...expired);
      start += ids.length - expired.length;
    }
    return records;
  }
}

/** A TTL option: a positive whole number of ms, or 0 for none. */
export function checkTtl(ttl: number | undefined): number {
  if (ttl === undefined) return 0;
  if (!Number.isInteger(ttl) || ttl <= 0)
    throw new ConfigurationError('endedRunTtlMs', `must be a positive integer, got ${String(ttl)}`);
  return ttl;
}

/** A run's record hash. */
export function recordKey(prefix: string, runId: string): string {
  return `${prefix}:run:${runId}`;
}

/** The key that keeps a run id refused after its record expired. */
export function tombstoneKey(prefix: string, runId: string): string {
  return `${prefix}:run-id:${runId}`;
}

/** How the record's hash stores a field: `status` as plain text (Lua compares it), the rest as JSON. */
function fieldText(field: string, value: unknown): string {
  return field === 'status' ? String(value) : JSON.stringify(value);
}

const progressFieldNames = ['steps', 'billedTokens', 'costUsd', 'updatedAt'] as const;

/** A step's progress figures as the record's hash stores them (field, value, …). */
export function progressFields(progress: RunProgress): string[] {
  const pairs: string[] = [];
  for (const field of progressFieldNames) pairs.push(field, fieldText(field, progress[field]));
  return pairs;
}

function toPairs(record: RunRecord): string[] {
  const pairs: string[] = [];
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined) continue;
    pairs.push(field, fieldText(field, value));
  }
  return pairs;
}

function fromPairs(reply: readonly string[]): RunRecord {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) hash[reply[i] as string] = reply[i + 1] as string;
  return fromHash(hash);
}

function fromHash(hash: Record<string, string>): RunRecord {
  const record: Record<string, unknown> = {};
  for (const [field, text] of Object.entries(hash)) {
    if (field === 'request') continue;
    record[field] = field === 'status' ? text : JSON.parse(text);
  }
  return record as unknown as RunRecord;
}
