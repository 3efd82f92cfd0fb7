import {
  decideReserve,
  type FinishRequest,
  type IdempotencyStore,
  type ReserveOutcome,
  type ReserveRequest,
  type StoredFailure,
} from './store.js';

interface Row {
  fingerprint: string;
  status: 'in_progress' | 'completed' | 'failed';
  token: string;
  leaseUntilMs: number;
  expiresAtMs: number;
  result?: unknown;
  failure?: StoredFailure;
}

/**
 * Records in a map, for unit tests. NOT durable: a restart forgets every key, so a retry after a
 * crash runs the effect again. Use the SQLite, PostgreSQL or Redis store for anything real.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly durable = false;
  readonly #rows = new Map<string, Row>();

  async reserve(request: ReserveRequest): Promise<ReserveOutcome> {
    const row = this.#rows.get(request.key);
    const decision = decideReserve(row, request);
    if (decision === 'insert') {
      this.#rows.set(request.key, {
        fingerprint: request.fingerprint,
        status: 'in_progress',
        token: request.token,
        leaseUntilMs: request.nowMs + request.leaseMs,
        expiresAtMs: request.nowMs + request.retentionMs,
      });
      return { kind: 'reserved' };
    }
    if (decision === 'take_over' && row) {
      row.token = request.token;
      row.leaseUntilMs = request.nowMs + request.leaseMs;
      return { kind: 'taken_over' };
    }
    return decision as ReserveOutcome;
  }

  async complete(request: FinishRequest & { result: unknown }): Promise<boolean> {
    return this.#finish(request, { status: 'completed', result: request.result });
  }

  async fail(request: FinishRequest & { failure: StoredFailure }): Promise<boolean> {
    return this.#finish(request, { status: 'failed', failure: request.failure });
  }

  async release(request: { key: string; token: string }): Promise<boolean> {
    const row = this.#rows.get(request.key);
    if (!row || row.token !== request.token || row.status !== 'in_progress') return false;
    this.#rows.delete(request.key);
    return true;
  }

  async expireLease(request: { key: string; token: string; nowMs: number }): Promise<boolean> {
    const row = this.#rows.get(request.key);
    if (!row || row.token !== request.token || row.status !== 'in_progress') return false;
    row.leaseUntilMs = request.nowMs;
    return true;
  }

  #finish(request: FinishRequest, update: Partial<Row>): boolean {
    const row = this.#rows.get(request.key);
    if (!row || row.token !== request.token) return false;
    if (row.status !== 'in_progress') return row.status === update.status;
    Object.assign(row, update, { expiresAtMs: request.nowMs + request.retentionMs });
    return true;
  }
}
