import { ReinsError } from '../errors/reins-error.js';

/** What a stored operation failed with, replayed to later calls with the same key. */
export interface StoredFailure {
  code: string;
  message: string;
}

/** A store's answer to a reservation. */
export type ReserveOutcome =
  /** The key was free: execute, then complete. */
  | { kind: 'reserved' }
  /** A previous holder's lease ran out (it crashed, or its call ended in doubt): reconcile, then execute. */
  | { kind: 'taken_over' }
  /** Someone holds the key now. */
  | { kind: 'in_progress'; leaseUntilMs: number }
  | { kind: 'completed'; result: unknown }
  | { kind: 'failed'; failure: StoredFailure }
  /** The key was used for a different input. Nothing runs. */
  | { kind: 'fingerprint_mismatch' };

export interface ReserveRequest {
  key: string;
  /** A hash of the canonical input, without the key itself. */
  fingerprint: string;
  /** Identifies this holder: only it can complete, fail or release the reservation. */
  token: string;
  nowMs: number;
  leaseMs: number;
  retentionMs: number;
}

export interface FinishRequest {
  key: string;
  token: string;
  nowMs: number;
  retentionMs: number;
}

/**
 * Where idempotency records live. Every operation is atomic; SQLite, PostgreSQL and Redis
 * implementations pass one conformance suite, and the in-memory one says plainly it is not durable.
 * Expiry and lease math use the `nowMs` the caller passes (an injected clock), in epoch milliseconds.
 */
export interface IdempotencyStore {
  reserve(request: ReserveRequest): Promise<ReserveOutcome>;
  /** Records the result. False when this token no longer holds the key. */
  complete(request: FinishRequest & { result: unknown }): Promise<boolean>;
  /** Records a terminal failure, replayed to later calls. */
  fail(request: FinishRequest & { failure: StoredFailure }): Promise<boolean>;
  /** Drops the reservation: the call failed before any effect, so a retry may run it. */
  release(request: { key: string; token: string }): Promise<boolean>;
  /** Ends the lease now but keeps the record: the call ended in doubt; the next caller reconciles. */
  expireLease(request: { key: string; token: string; nowMs: number }): Promise<boolean>;
}

/** The decision every store makes on reserve, given the record it found (or none). */
export function decideReserve(
  record:
    | {
        fingerprint: string;
        status: string;
        leaseUntilMs: number;
        expiresAtMs: number;
        result?: unknown;
        failure?: StoredFailure | undefined;
      }
    | undefined,
  request: ReserveRequest,
): ReserveOutcome | 'insert' | 'take_over' {
  if (!record || record.expiresAtMs <= request.nowMs) return 'insert';
  if (record.fingerprint !== request.fingerprint) return { kind: 'fingerprint_mismatch' };
  if (record.status === 'completed') return { kind: 'completed', result: record.result };
  if (record.status === 'failed')
    return { kind: 'failed', failure: record.failure ?? { code: 'failed', message: 'the operation failed' } };
  // A clock that steps back sees the lease as still held: the safe side.
  if (request.nowMs < record.leaseUntilMs) return { kind: 'in_progress', leaseUntilMs: record.leaseUntilMs };
  return 'take_over';
}

/** Parses a stored result or failure; unreadable JSON is a `corrupt_record` error, never a guess. */
export function parseStored(text: string | null, key: string): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ReinsError('corrupt_record', `idempotency record ${key} holds unreadable JSON`, { cause });
  }
}
