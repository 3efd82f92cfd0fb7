import type { ApprovalVerdict } from '../loop/approval.js';
import { type Clock, type IdGenerator, randomIds, systemClock } from '../time/clock.js';
import { checkVerdicts } from './check-verdicts.js';
import { type ExecuteRunResult, executeRun, type RunExecutorOptions } from './execute-run.js';
import type { CancelResult, RunQueue, RunRequest, VerdictResult } from './run-queue.js';
import { queuedRecord, type RunJob } from './run-stores.js';

/** Options for {@link InProcessRunQueue}: the executor's, plus how many runs go at once. */
export interface InProcessRunQueueOptions extends RunExecutorOptions {
  /** Runs executing at once in this process. @default 4 */
  concurrency?: number;
  /** @default random UUIDs (`run_…`) */
  generateId?: IdGenerator;
  /** Told about every finished execution (tests, metrics). */
  onExecuted?: (job: RunJob, result: ExecuteRunResult) => void;
}

interface Waiting {
  job: RunJob;
  priority: number;
  order: number;
}

/**
 * A {@link RunQueue} whose runs execute in this process, with the same executor the BullMQ workers
 * use: for tests, a single-process service and the `reins bench queue` baseline. Nothing survives
 * the process; lower `priority` runs first, then first in, first out.
 *
 * @example
 * import { MemoryCheckpointStore } from 'reins';
 * import { agentRegistry, defineAgent, InProcessRunQueue, MemoryRunEventLog, MemoryRunRegistry } from 'reins/queue';
 * import { scriptedModel } from 'reins/testing';
 * const queue = new InProcessRunQueue({
 *   agents: agentRegistry([defineAgent({ name: 'echo', build: () => ({ model: scriptedModel([{ text: 'hi' }]) }) })]),
 *   checkpoint: new MemoryCheckpointStore(),
 *   registry: new MemoryRunRegistry(),
 *   events: new MemoryRunEventLog(),
 * });
 * await queue.enqueue({ agent: 'echo', input: 'hello', actor: { id: 'ana' } });
 * await queue.idle();
 */
export class InProcessRunQueue implements RunQueue {
  readonly #options: InProcessRunQueueOptions;
  readonly #clock: Clock;
  readonly #concurrency: number;
  readonly #generateId: IdGenerator;
  readonly #waiting: Waiting[] = [];
  readonly #running = new Map<string, { cancel: AbortController; done: Promise<void> }>();
  readonly #drain = new AbortController();
  readonly #idle = new Set<() => void>();
  #order = 0;
  #closed = false;

  constructor(options: InProcessRunQueueOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#concurrency = options.concurrency ?? 4;
    this.#generateId = options.generateId ?? randomIds;
  }

  async enqueue(
    request: RunRequest,
  ): Promise<{ ok: true; runId: string } | { ok: false; reason: 'duplicate_run'; runId: string }> {
    const runId = request.runId ?? this.#generateId('run');
    const created = await this.#options.registry.create(queuedRecord(runId, request, this.#clock.now()));
    if (!created) return { ok: false, reason: 'duplicate_run', runId };
    this.#push({ runId, request }, request.priority ?? 0);
    return { ok: true, runId };
  }

  async cancel(runId: string, by: string): Promise<CancelResult> {
    const { registry } = this.#options;
    const index = this.#waiting.findIndex((entry) => entry.job.runId === runId);
    if (index >= 0) {
      this.#waiting.splice(index, 1);
      const record = await registry.update(
        runId,
        {
          status: 'ended',
          outcome: { kind: 'cancelled', reason: `cancelled by ${by} while queued` },
          updatedAt: this.#clock.now(),
        },
        ['queued'],
      );
      await this.#options.events.end(runId);
      this.#settleIdle();
      return record ? { ok: true, status: 'ended' } : { ok: false, reason: 'already_ended' };
    }
    const running = this.#running.get(runId);
    const record = await registry.update(runId, { status: 'cancelling', updatedAt: this.#clock.now() }, [
      'queued',
      'running',
      'awaiting_approval',
    ]);
    if (!record)
      return (await registry.get(runId))
        ? { ok: false, reason: 'already_ended' }
        : { ok: false, reason: 'not_found' };
    if (running) running.cancel.abort(`cancelled by ${by}`);
    else if (record.status === 'cancelling') {
      // Paused for approval: nothing holds it, so it ends here.
      await registry.update(runId, {
        status: 'ended',
        outcome: { kind: 'cancelled', reason: `cancelled by ${by}` },
        pendingApprovals: undefined,
        updatedAt: this.#clock.now(),
      });
      await this.#options.events.end(runId);
      return { ok: true, status: 'ended' };
    }
    return { ok: true, status: 'cancelling' };
  }

  async submitVerdicts(runId: string, verdicts: ApprovalVerdict[]): Promise<VerdictResult> {
    const { registry } = this.#options;
    const record = await registry.get(runId);
    const checked = checkVerdicts(record, verdicts);
    if (!checked.ok || !record) return checked;
    // The compare-and-set from awaiting_approval: of two concurrent submissions, one resumes the run.
    const moved = await registry.update(runId, { status: 'queued', updatedAt: this.#clock.now() }, [
      'awaiting_approval',
    ]);
    if (!moved) return { ok: false, reason: 'not_awaiting_approval' };
    const request = { agent: record.agent, input: '', actor: { id: record.actorId }, tenant: record.tenant };
    this.#push({ runId, request: await this.#requestOf(runId, request), verdicts }, 0);
    return { ok: true };
  }

  /** Resolves when nothing is waiting or running. */
  idle(): Promise<void> {
    if (this.#waiting.length === 0 && this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /** Stops taking runs; in-flight runs stop at their next checkpoint and stay `queued` (nothing resumes them here). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#drain.abort();
    await Promise.all([...this.#running.values()].map((entry) => entry.done));
  }

  readonly #requests = new Map<string, RunRequest>();

  async #requestOf(runId: string, fallback: RunRequest): Promise<RunRequest> {
    return this.#requests.get(runId) ?? fallback;
  }

  #push(job: RunJob, priority: number): void {
    this.#requests.set(job.runId, job.request);
    this.#waiting.push({ job, priority, order: this.#order++ });
    this.#waiting.sort((a, b) => a.priority - b.priority || a.order - b.order);
    this.#pump();
  }

  #pump(): void {
    while (!this.#closed && this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      const next = this.#waiting.shift() as Waiting;
      const cancel = new AbortController();
      const entry = { cancel, done: Promise.resolve() };
      this.#running.set(next.job.runId, entry);
      entry.done = this.#execute(next.job, cancel.signal).finally(() => {
        this.#running.delete(next.job.runId);
        this.#pump();
        this.#settleIdle();
      });
    }
  }

  async #execute(job: RunJob, cancel: AbortSignal): Promise<void> {
    // A tick first, as a job picked from a queue would: enqueue returns before the run starts.
    await null;
    let result: ExecuteRunResult;
    try {
      result = await executeRun(job, this.#options, { cancel, drain: this.#drain.signal });
    } catch (error) {
      // A store that failed outside the loop's boundary: the run ends as a hard error.
      await this.#options.registry.update(job.runId, {
        status: 'ended',
        outcome: {
          kind: 'hard_error',
          source: 'internal',
          error: { name: 'Error', message: error instanceof Error ? error.message : String(error) },
        },
        updatedAt: this.#clock.now(),
      });
      await this.#options.events.end(job.runId);
      return;
    }
    if (result.kind === 'ended') this.#requests.delete(job.runId);
    this.#options.onExecuted?.(job, result);
  }

  #settleIdle(): void {
    if (this.#waiting.length > 0 || this.#running.size > 0) return;
    const waiting = [...this.#idle];
    this.#idle.clear();
    for (const resolve of waiting) resolve();
  }
}
