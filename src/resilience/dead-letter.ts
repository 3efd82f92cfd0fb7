import type { ErrorInfo } from '../errors/error-info.js';
import type { ErrorClass } from './classify-error.js';

/** A work item moved out of the live queue after a terminal error or its last allowed attempt. */
export interface DeadLetter {
  id: string;
  /** Where it came from: the queue or job name. */
  source: string;
  payload: unknown;
  error: ErrorInfo;
  classification: ErrorClass;
  attempts: number;
  firstFailedAtMs: number;
  lastFailedAtMs: number;
}

/** Where dead letters wait for a person. SQLite (`reins/sqlite`) and Redis (`reins/redis`) back it. */
export interface DeadLetterStore {
  /** Adds a letter; adding an id again updates it (attempts, last error) instead of duplicating. */
  add(letter: DeadLetter): void | Promise<void>;
  list(options?: { limit?: number }): DeadLetter[] | Promise<DeadLetter[]>;
  get(id: string): DeadLetter | undefined | Promise<DeadLetter | undefined>;
  /** Removes and returns a letter, for a retry. */
  release(id: string): DeadLetter | undefined | Promise<DeadLetter | undefined>;
  /** Removes every letter; returns how many. */
  purge(): number | Promise<number>;
  count(): number | Promise<number>;
}

/** Dead letters in a map: for tests. Not durable. */
export class MemoryDeadLetterStore implements DeadLetterStore {
  readonly #letters = new Map<string, DeadLetter>();
  add(letter: DeadLetter): void {
    const existing = this.#letters.get(letter.id);
    this.#letters.set(
      letter.id,
      existing ? { ...letter, firstFailedAtMs: existing.firstFailedAtMs } : letter,
    );
  }
  list(options: { limit?: number } = {}): DeadLetter[] {
    return [...this.#letters.values()].slice(0, options.limit ?? Number.POSITIVE_INFINITY);
  }
  get(id: string): DeadLetter | undefined {
    return this.#letters.get(id);
  }
  release(id: string): DeadLetter | undefined {
    const letter = this.#letters.get(id);
    this.#letters.delete(id);
    return letter;
  }
  purge(): number {
    const count = this.#letters.size;
    this.#letters.clear();
    return count;
  }
  count(): number {
    return this.#letters.size;
  }
}
