import type { Clock, TimerHandle } from '../../time/clock.js';
import type { CallRuntime } from '../call-plan.js';

interface Deadline {
  at: number;
  onTimeout: () => void;
}

/**
 * What one batch's calls share: a signal made only if a tool reads it, one timer for every call's
 * deadline (armed for the earliest), and one list of abort listeners. Most batches make no
 * `AbortController` and one timer.
 */
export class BatchRuntime implements CallRuntime {
  readonly #clock: Clock;
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;
  readonly #listeners = new Set<() => void>();
  readonly #deadlines = new Set<Deadline>();
  #timer: TimerHandle | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(clock: Clock, run: AbortSignal) {
    this.#clock = clock;
    if (run.aborted) {
      this.#aborted = true;
      this.#reason = run.reason;
    }
  }

  get signal(): AbortSignal {
    // Not linked to the run's signal: the run forwards its abort to the running batch itself.
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  now(): number {
    return this.#clock.now();
  }

  /** Aborts every call of the batch (a fatal sibling, or the run's signal). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    for (const listener of [...this.#listeners]) listener();
    this.#listeners.clear();
  }

  onAbort(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  deadline(ms: number, onTimeout: () => void): () => void {
    const entry: Deadline = { at: this.#clock.now() + ms, onTimeout };
    this.#deadlines.add(entry);
    if (entry.at < this.#timerAt) this.#arm(entry.at);
    return () => {
      this.#deadlines.delete(entry);
      if (this.#deadlines.size === 0) this.#disarm();
    };
  }

  /** Clears the timer and unlinks the signal: the batch is over. */
  dispose(): void {
    this.#disarm();
    this.#deadlines.clear();
    this.#listeners.clear();
  }

  #arm(at: number): void {
    this.#disarm();
    this.#timerAt = at;
    this.#timer = this.#clock.setTimeout(() => this.#fire(), Math.max(0, at - this.#clock.now()));
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of [...this.#deadlines]) {
      if (entry.at <= now) {
        this.#deadlines.delete(entry);
        entry.onTimeout();
      } else if (entry.at < next) next = entry.at;
    }
    if (next < Number.POSITIVE_INFINITY) this.#arm(next);
  }
}
