import type { RunRecord, RunRecordStatus } from './run-queue.js';
import { patchRecord, type RunRecordPatch, type RunRecordStore } from './run-stores.js';

/**
 * Run records in this process's memory: for tests, a single-process service and the in-process
 * queue. Records are copied in and out, so a caller cannot change a stored record by accident.
 */
export class MemoryRunRegistry implements RunRecordStore {
  readonly #records = new Map<string, RunRecord>();

  async create(record: RunRecord): Promise<boolean> {
    if (this.#records.has(record.runId)) return false;
    this.#records.set(record.runId, structuredClone(record));
    return true;
  }

  async update(
    runId: string,
    patch: RunRecordPatch,
    from?: readonly RunRecordStatus[],
  ): Promise<RunRecord | undefined> {
    const record = this.#records.get(runId);
    if (!record || (from && !from.includes(record.status))) return undefined;
    const next = patchRecord(record, structuredClone(patch));
    this.#records.set(runId, next);
    return structuredClone(next);
  }

  async start(runId: string, at: number, from: readonly RunRecordStatus[]): Promise<RunRecord | undefined> {
    const record = this.#records.get(runId);
    if (!record || !from.includes(record.status)) return undefined;
    const next = { ...record, status: 'running' as const, attempts: record.attempts + 1, updatedAt: at };
    this.#records.set(runId, next);
    return structuredClone(next);
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const record = this.#records.get(runId);
    return record && structuredClone(record);
  }

  async list(filter: { actorId: string; limit?: number }): Promise<RunRecord[]> {
    const mine = [...this.#records.values()].filter((record) => record.actorId === filter.actorId);
    // Newest first; insertion order breaks ties so runs created in one millisecond keep an order.
    const ordered = mine.map((record, index) => ({ record, index }));
    ordered.sort((a, b) => b.record.createdAt - a.record.createdAt || b.index - a.index);
    return ordered.slice(0, filter.limit ?? 50).map(({ record }) => structuredClone(record));
  }
}
