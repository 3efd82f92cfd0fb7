import type { Redis } from 'ioredis';
import { type CheckpointLogEntry, commitBody, replayCheckpointLog } from '../checkpoint/checkpoint-log.js';
import {
  type CheckpointCommit,
  type CheckpointStore,
  type CommitResult,
  checkCommit,
} from '../checkpoint/checkpoint-store.js';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { RunState } from '../loop/run-state.js';
import { writerNonce } from './writer-nonce.js';

/** Options of {@link RedisCheckpointStore}. */
export interface RedisCheckpointStoreOptions {
  /** An ioredis client (one connection; not a Cluster when a `waitFor…` option is set). */
  redis: Redis;
  /**
   * Prefix of every key: a run's keys are `<prefix>:{<runId>}:head` and `<prefix>:{<runId>}:log`
   * (one hash tag, so a Redis Cluster keeps them in one slot).
   * @default 'reins:checkpoint'
   */
  keyPrefix?: string;
  /**
   * Keys of a run that ended (any outcome but `awaiting_approval`, which waits for a person) expire
   * this long after its last commit; a later commit (a resume) makes them persistent again. Once
   * expired, the run is unknown: a copy of its state resumed later is taken as a new run, so keep
   * this longer than any job can be retried.
   * @default undefined (kept until deleted)
   */
  endedRunTtlMs?: number;
  /**
   * After each applied commit, `WAIT replicas timeoutMs`: the commit resolves only once that many
   * replicas acknowledged it, and throws `ReinsError('checkpoint_not_durable')` when fewer did in
   * time (the write stays applied; the run stops from its checkpoint). Replication is asynchronous,
   * so this narrows, and does not close, the window a failover can lose.
   * @default undefined (no wait)
   */
  waitForReplicas?: { replicas: number; timeoutMs: number };
  /**
   * After each applied commit, `WAITAOF local replicas timeoutMs` (Redis 7.2 or later, with
   * `appendonly yes`): resolves once the commit is fsynced to the primary's append-only file
   * (`local: true`) and to that many replicas'. Throws `checkpoint_not_durable` when they did not
   * in time, and `invalid_option` on a server without WAITAOF.
   * @default undefined (no wait)
   */
  waitForAof?: { local: boolean; replicas: number; timeoutMs: number };
}

/** The commit as one atomic script: compare the head's revision, then write the log and the head. */
const commitScript = `
local current = redis.call('HGET', KEYS[1], 'revision')
local mode = ARGV[3]
local revision = tonumber(ARGV[2])
if mode == 'save' then
  revision = (tonumber(current) or 0) + 1
elseif current then
  if tonumber(current) ~= tonumber(ARGV[1]) then
    -- This very commit sent again (a connection that dropped before its reply was read, resent by
    -- the client): the head is at its revision, written by it (its writer nonce). Another writer's
    -- commit, even byte for byte the same, has another nonce and is refused.
    if tonumber(current) == revision and redis.call('HGET', KEYS[1], 'writer') == ARGV[9] then
      return {1, revision}
    end
    return {0, tonumber(current)}
  end
  if mode == 'd' and redis.call('EXISTS', KEYS[2]) == 0 then return {-2, tonumber(current)} end
elseif mode == 'd' then
  return {-1, 0}
end
local kind = 'd'
if mode ~= 'd' then
  kind = 's'
  redis.call('DEL', KEYS[2])
end
redis.call('RPUSH', KEYS[2], kind .. revision .. ':' .. ARGV[4])
redis.call('HSET', KEYS[1], 'revision', revision, 'status', ARGV[5], 'step', ARGV[6], 'updatedAt', ARGV[7], 'writer', ARGV[9])
local ttl = tonumber(ARGV[8])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
else
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
end
return {1, revision}
`;
const commitCommand = 'reinsCheckpointCommitV2';

/**
 * Run checkpoints in Redis, shared by every worker of a fleet, under the {@link CheckpointStore}
 * contract.
 *
 * - Per run, a list of log entries (the last snapshot and the deltas after it, as JSON text) and a
 *   head hash (`revision`, `status`, `step`, `updatedAt`). A snapshot replaces the list.
 * - `commit` is one Lua script (EVALSHA, falling back to EVAL when the server lost its script
 *   cache): Redis runs it atomically, so the compare-and-set on the head's revision and the writes
 *   after it happen together or not at all, whichever connection each writer uses. Of N writers at
 *   one revision exactly one applies; the others get `{ ok: false, currentRevision }`.
 * - `load` reads the head and the list in one MULTI/EXEC, and checks that the log reaches the head.
 *
 * What "durable when `commit` resolves" means here depends on the server, and the store cannot make
 * it stronger than the server is:
 * - The write is in the primary's memory. A killed worker loses nothing (the next worker loads it).
 * - A restart of Redis keeps it only with persistence: `appendonly yes` with `appendfsync always`
 *   fsyncs before replying (nothing acknowledged is lost, and a script's writes are replayed whole
 *   or not at all); `appendfsync everysec` (Redis's default when AOF is on) can lose about the last
 *   second on a power cut or OS crash, not on a Redis crash; with `appendonly no` a restart loses
 *   everything since the last RDB snapshot. Use `waitForAof` (Redis 7.2+) to have each commit wait
 *   for the fsync whatever the server's policy, and `waitForReplicas` to narrow what a failover loses.
 * - New in this version: there are no pre-revision records to read. `save(state)` (the older
 *   contract, no compare-and-set) writes a snapshot at the next revision.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { runAgent } from 'reins';
 * import { RedisCheckpointStore } from 'reins/redis';
 * import { scriptedModel } from 'reins/testing';
 *
 * const redis = new Redis('redis://127.0.0.1:6379');
 * const checkpoint = new RedisCheckpointStore({
 *   redis,
 *   keyPrefix: 'support:checkpoints',
 *   endedRunTtlMs: 7 * 24 * 3_600_000,
 * });
 * const result = await runAgent({
 *   model: scriptedModel([{ text: 'Done.' }]),
 *   input: 'Summarize the ticket.',
 *   runId: 'ticket-42',
 *   checkpoint,
 * });
 * const saved = await checkpoint.load('ticket-42');
 * console.log(result.outcome.kind, saved?.revision);
 * redis.disconnect();
 * ```
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #endedRunTtlMs: number;
  readonly #waitForReplicas: { replicas: number; timeoutMs: number } | undefined;
  readonly #waitForAof: { local: boolean; replicas: number; timeoutMs: number } | undefined;

  constructor(options: RedisCheckpointStoreOptions) {
    if (typeof options.redis?.defineCommand !== 'function')
      throw new ConfigurationError('redis', 'needs an ioredis client');
    const ttl = options.endedRunTtlMs;
    if (ttl !== undefined && (!Number.isInteger(ttl) || ttl <= 0))
      throw new ConfigurationError('endedRunTtlMs', `must be a positive integer, got ${String(ttl)}`);
    for (const [option, wait] of [
      ['waitForReplicas', options.waitForReplicas],
      ['waitForAof', options.waitForAof],
    ] as const)
      if (
        wait !== undefined &&
        (!Number.isInteger(wait.replicas) ||
          wait.replicas < 0 ||
          !Number.isInteger(wait.timeoutMs) ||
          wait.timeoutMs < 0)
      )
        throw new ConfigurationError(option, 'replicas and timeoutMs must be non-negative integers');
    this.#redis = options.redis;
    this.#prefix = options.keyPrefix ?? 'reins:checkpoint';
    this.#endedRunTtlMs = ttl ?? 0;
    this.#waitForReplicas = options.waitForReplicas;
    this.#waitForAof = options.waitForAof;
    if (!(commitCommand in this.#redis))
      this.#redis.defineCommand(commitCommand, { numberOfKeys: 2, lua: commitScript });
  }

  /**
   * The client every commit goes through. A writer on the same (non-cluster) client knows its
   * earlier commands reach Redis, and are applied, before this store's next commit.
   */
  get connection(): Redis {
    return this.#redis;
  }

  /** Applies `commit` when the run's head is at `commit.expectedRevision` or the run is new. */
  async commit(commit: CheckpointCommit): Promise<CommitResult> {
    checkCommit(commit);
    const outcome = commit.snapshot ? commit.snapshot.outcome : (commit.delta.outcome ?? null);
    const [code, revision] = await this.#run(
      commit.runId,
      commit.expectedRevision,
      commit.revision,
      commit.snapshot ? 's' : 'd',
      commitBody(commit),
      commit.status,
      commit.step,
      commit.updatedAt,
      this.#ttlFor(commit.status, outcome?.kind),
      writerNonce(),
    );
    if (code === 0) return { ok: false, currentRevision: revision };
    if (code === -1)
      throw new ReinsError(
        'corrupt_state',
        `checkpoint delta for ${commit.runId} has no snapshot to apply to`,
      );
    if (code === -2)
      throw new ReinsError('corrupt_state', `checkpoint for ${commit.runId} has a head but no log`);
    await this.#waitDurable(commit.runId);
    return { ok: true };
  }

  /**
   * Writes a whole state as a new snapshot at the next revision, without compare-and-set (the
   * older contract, for callers that only `save`).
   */
  async save(state: RunState): Promise<void> {
    await this.#run(
      state.runId,
      0,
      0,
      'save',
      JSON.stringify(state),
      state.status,
      state.step,
      state.updatedAt,
      this.#ttlFor(state.status, state.outcome?.kind),
      writerNonce(),
    );
    await this.#waitDurable(state.runId);
  }

  /** The latest committed state with its `revision`, or undefined for an unknown run. */
  async load(runId: string): Promise<RunState | undefined> {
    const replies = await this.#redis
      .multi()
      .hget(this.#headKey(runId), 'revision')
      .lrange(this.#logKey(runId), 0, -1)
      .exec();
    if (!replies) throw new ReinsError('checkpoint_lost', `loading checkpoint ${runId}: transaction aborted`);
    const [[headError, head], [logError, log]] = replies as [
      [Error | null, unknown],
      [Error | null, unknown],
    ];
    if (headError || logError) throw headError ?? logError;
    if (head === null || head === undefined) return undefined;
    let snapshot: CheckpointLogEntry | undefined;
    const deltas: CheckpointLogEntry[] = [];
    for (const raw of log as string[]) {
      const entry = parseEntry(raw, runId);
      if (entry.kind === 's' && snapshot === undefined && deltas.length === 0) snapshot = entry;
      else if (entry.kind === 'd') deltas.push(entry);
      else
        throw new ReinsError('corrupt_state', `checkpoint log for ${runId} has a snapshot after its start`);
    }
    return replayCheckpointLog(runId, Number(head), snapshot, deltas);
  }

  /** The run's head (revision, status, last completed step, last commit's time), or undefined. */
  async head(
    runId: string,
  ): Promise<{ revision: number; status: RunState['status']; step: number; updatedAt: number } | undefined> {
    const [revision, status, step, updatedAt] = await this.#redis.hmget(
      this.#headKey(runId),
      'revision',
      'status',
      'step',
      'updatedAt',
    );
    if (revision === null || revision === undefined) return undefined;
    return {
      revision: Number(revision),
      status: status as RunState['status'],
      step: Number(step),
      updatedAt: Number(updatedAt),
    };
  }

  /** Deletes a run's keys; true when it had any. */
  async delete(runId: string): Promise<boolean> {
    return (await this.#redis.del(this.#headKey(runId), this.#logKey(runId))) > 0;
  }

  #ttlFor(status: RunState['status'], outcomeKind: string | undefined): number {
    return status === 'ended' && outcomeKind !== 'awaiting_approval' ? this.#endedRunTtlMs : 0;
  }

  async #run(runId: string, ...args: (string | number)[]): Promise<[number, number]> {
    const command = (this.#redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[
      commitCommand
    ]!;
    const reply = (await command.call(this.#redis, this.#headKey(runId), this.#logKey(runId), ...args)) as [
      number,
      number,
    ];
    return reply;
  }

  async #waitDurable(runId: string): Promise<void> {
    const replicas = this.#waitForReplicas;
    if (replicas) {
      const acknowledged = Number(await this.#redis.call('WAIT', replicas.replicas, replicas.timeoutMs));
      if (acknowledged < replicas.replicas)
        throw new ReinsError(
          'checkpoint_not_durable',
          `checkpoint for ${runId}: ${acknowledged} of ${replicas.replicas} replicas acknowledged within ${replicas.timeoutMs} ms`,
        );
    }
    const aof = this.#waitForAof;
    if (aof) {
      let reply: unknown;
      try {
        reply = await this.#redis.call('WAITAOF', aof.local ? 1 : 0, aof.replicas, aof.timeoutMs);
      } catch (cause) {
        const message = cause instanceof Error ? cause.message : String(cause);
        if (/unknown command|appendonly/i.test(message))
          throw new ReinsError(
            'invalid_option',
            `waitForAof: this Redis cannot WAITAOF (${message}); it needs Redis 7.2 or later with appendonly yes`,
            { cause },
          );
        throw cause;
      }
      const [local, onReplicas] = (reply as [number, number]).map(Number) as [number, number];
      if ((aof.local && local < 1) || onReplicas < aof.replicas)
        throw new ReinsError(
          'checkpoint_not_durable',
          `checkpoint for ${runId}: fsynced locally ${local}, on ${onReplicas} of ${aof.replicas} replicas within ${aof.timeoutMs} ms`,
        );
    }
  }

  #headKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:head`;
  }

  #logKey(runId: string): string {
    return `${this.#prefix}:{${runId}}:log`;
  }
}

/** A log entry as stored: `s` (snapshot) or `d` (delta), the revision, a colon, the JSON. */
function parseEntry(raw: string, runId: string): CheckpointLogEntry & { kind: 's' | 'd' } {
  const kind = raw[0];
  const colon = raw.indexOf(':');
  const revision = Number(raw.slice(1, colon));
  if ((kind !== 's' && kind !== 'd') || colon < 2 || !Number.isInteger(revision))
    throw new ReinsError('corrupt_state', `checkpoint log entry for ${runId} is malformed`);
  return { kind, revision, body: raw.slice(colon + 1) };
}
