import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { fingerprint } from '../controls/fingerprint.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { ApprovalVerdict } from '../loop/approval.js';
import { checkVerdicts } from '../queue/check-verdicts.js';
import type { CancelResult, RunQueue, RunRecord, RunRequest, VerdictResult } from '../queue/run-queue.js';
import { queuedRecord, type RunJob } from '../queue/run-stores.js';
import { type Clock, type IdGenerator, randomIds, systemClock } from '../time/clock.js';
import { type RedisConnection, redisConnection } from './redis-connection.js';
import { RedisRunEventLog } from './redis-run-event-log.js';
import { RedisRunRegistry } from './redis-run-registry.js';

/** Options for {@link BullmqRunQueue}. */
export interface BullmqRunQueueOptions {
  /** A Redis URL or an ioredis client (made with `maxRetriesPerRequest: null`). @default 'redis://127.0.0.1:6379' */
  redis?: RedisConnection;
  /** The BullMQ queue's name; workers must use the same. @default 'reins-runs' */
  queueName?: string;
  /** Prefix of every key (BullMQ's and reins's). @default 'reins' */
  prefix?: string;
  /** @default systemClock */
  clock?: Clock;
  /** @default random UUIDs (`run_…`) */
  generateId?: IdGenerator;
  /**
   * Records and traces of ended runs expire this long after the run ends (give workers the same).
   * @default undefined (kept until deleted)
   */
  endedRunTtlMs?: number;
}

/** A pause's name in a job id: a fingerprint of its approval ids, sorted. */
function pauseName(requests: readonly { approvalId: string }[]): string {
  return fingerprint(
    requests
      .map((request) => request.approvalId)
      .sort()
      .join('\n'),
  );
}

/** The id of the job that resumes `runId` after the pause that asked for `requests`: one per pause. */
function resumeJobId(runId: string, requests: readonly { approvalId: string }[]): string {
  return `${runId}.resume.${pauseName(requests)}`;
}

/** The channel a cancel is published on; every worker listens. */
export function cancelChannel(prefix: string): string {
  return `${prefix}:run-cancel`;
}

/**
 * Runs as BullMQ jobs on Redis. The job id is the run id, so an id already queued or run is
 * refused; the job carries the request (names and data, no functions); a paused run's resume is a
 * second job carrying the verdicts. Read records with {@link BullmqRunQueue.registry} and traces
 * with {@link BullmqRunQueue.events}; run workers with `createRunWorker`.
 *
 * @example
 * import { BullmqRunQueue } from 'reins/bullmq';
 * const queue = new BullmqRunQueue({ redis: 'redis://127.0.0.1:6379' });
 * const queued = await queue.enqueue({ agent: 'support', input: 'Refund order 1001', actor: { id: 'ana' } });
 * await queue.close();
 */
export class BullmqRunQueue implements RunQueue {
  readonly queue: Queue<RunJob>;
  readonly registry: RedisRunRegistry;
  readonly events: RedisRunEventLog;
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #clock: Clock;
  readonly #generateId: IdGenerator;

  constructor(options: BullmqRunQueueOptions = {}) {
    const { redis, owned } = redisConnection(options.redis);
    this.#redis = redis;
    this.#owned = owned;
    this.#prefix = options.prefix ?? 'reins';
    this.#clock = options.clock ?? systemClock;
    this.#generateId = options.generateId ?? randomIds;
    this.queue = new Queue<RunJob>(options.queueName ?? 'reins-runs', {
      connection: redis,
      prefix: this.#prefix,
    });
    const ttl = options.endedRunTtlMs === undefined ? {} : { endedRunTtlMs: options.endedRunTtlMs };
    this.registry = new RedisRunRegistry({ redis, prefix: this.#prefix, ...ttl });
    this.events = new RedisRunEventLog({ redis, prefix: this.#prefix, records: this.registry, ...ttl });
  }

  async enqueue(
    request: RunRequest,
  ): Promise<{ ok: true; runId: string } | { ok: false; reason: 'duplicate_run'; runId: string }> {
    const runId = request.runId ?? this.#generateId('run');
    // BullMQ's own rules for a custom job id.
    // BullMQ's own rules for a custom job id, and `.resume.`, which names a run's resume jobs
    // (`<run>.resume.<pause>`): a run by that name would take another run's resume job id.
    if (runId.includes(':') || /^\d+$/.test(runId) || runId.includes('.resume.'))
      throw new ConfigurationError(
        'runId',
        `"${runId}" cannot contain ':' or '.resume.' or be a whole number (BullMQ job ids)`,
      );
    const created = await this.registry.create(queuedRecord(runId, request, this.#clock.now()), request);
    if (!created) return { ok: false, reason: 'duplicate_run', runId };
    await this.queue.add(
      'run',
      { runId, request },
      {
        jobId: runId,
        ...(request.priority ? { priority: request.priority } : {}),
        removeOnComplete: true,
        removeOnFail: { count: 10_000 },
      },
    );
    return { ok: true, runId };
  }

  async cancel(runId: string, by: string): Promise<CancelResult> {
    const outcome = { kind: 'cancelled' as const, reason: `cancelled by ${by}` };
    // Each move is a compare-and-set from the one status it was decided on: a record that moved
    // between the read and the write (a verdict resumed it, a worker took it, the run parked) is
    // read again and decided again, never cancelled on the strength of a status it no longer has.
    for (let attempt = 0; attempt < 8; attempt++) {
      const record = await this.registry.get(runId);
      if (!record) return { ok: false, reason: 'not_found' };
      if (record.status === 'ended') return { ok: false, reason: 'already_ended' };
      if (record.status === 'cancelling') {
        await this.#redis.publish(cancelChannel(this.#prefix), runId);
        return { ok: true, status: 'cancelling' };
      }
      if (record.status === 'awaiting_approval') {
        // Parked: nothing holds it, it ends here.
        const ended = await this.registry.update(
          runId,
          { status: 'ended', outcome, pendingApprovals: undefined, updatedAt: this.#clock.now() },
          ['awaiting_approval'],
        );
        if (!ended) continue;
        await this.events.end(runId);
        return { ok: true, status: 'ended' };
      }
      const cancelling = await this.registry.update(
        runId,
        { status: 'cancelling', updatedAt: this.#clock.now() },
        [record.status],
      );
      if (!cancelling) continue;
      if (record.status === 'queued' && (await this.#removeJobs(record))) {
        // Its job is gone before any worker took it: nothing holds it, it ends here.
        const ended = await this.registry.update(
          runId,
          { status: 'ended', outcome, pendingApprovals: undefined, updatedAt: this.#clock.now() },
          ['cancelling'],
        );
        if (ended) {
          await this.events.end(runId);
          return { ok: true, status: 'ended' };
        }
      }
      // A worker holds it (or is about to: it reads `cancelling` before it starts).
      await this.#redis.publish(cancelChannel(this.#prefix), runId);
      return { ok: true, status: 'cancelling' };
    }
    throw new Error(`cancel ${runId}: its record changed under each of 8 attempts`);
  }

  /**
   * Removes the run's waiting or delayed jobs: its first job and, for a run a verdict resumed, its
   * resume job (named by the pause's approval ids, still on the record). True when one was removed
   * and none is active; false when none was found or a worker holds one.
   */
  async #removeJobs(record: RunRecord): Promise<boolean> {
    const ids = [record.runId];
    if (record.pendingApprovals !== undefined) ids.push(resumeJobId(record.runId, record.pendingApprovals));
    let removed = false;
    for (const id of ids) {
      const job = await this.queue.getJob(id);
      if (!job) continue;
      try {
        await job.remove();
        removed = true;
      } catch {
        // Locked: a worker took it between the read and the remove.
        return false;
      }
    }
    return removed;
  }

  async submitVerdicts(runId: string, verdicts: ApprovalVerdict[]): Promise<VerdictResult> {
    const record = await this.registry.get(runId);
    const checked = checkVerdicts(record, verdicts);
    if (!checked.ok || !record) return checked;
    // The compare-and-set from awaiting_approval: of two concurrent submissions, one resumes the run.
    const moved = await this.registry.update(runId, { status: 'queued', updatedAt: this.#clock.now() }, [
      'awaiting_approval',
    ]);
    if (!moved) return { ok: false, reason: 'not_awaiting_approval' };
    const request = (await this.registry.request(runId)) ?? {
      agent: record.agent,
      input: '',
      actor: { id: record.actorId },
      tenant: record.tenant,
    };
    await this.queue.add(
      'resume',
      { runId, request, verdicts },
      // One resume job per pause, whatever else happens: the pause's approval ids name it (not the
      // attempt count, which a redelivered pause also counts).
      {
        jobId: resumeJobId(runId, record.pendingApprovals ?? []),
        // The resumed run keeps its place: the priority it was queued with.
        ...(request.priority ? { priority: request.priority } : {}),
        removeOnComplete: true,
        removeOnFail: { count: 10_000 },
      },
    );
    return { ok: true };
  }

  async close(): Promise<void> {
    await this.queue.close();
    await this.events.close();
    if (this.#owned) await this.#redis.quit();
  }
}
