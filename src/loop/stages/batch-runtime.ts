import type { Clock } from '../../time/clock.js';
import type { CallRuntime } from '../call-plan.js';
import type { RunDeadlines } from './run-deadlines.js';

const noop = (): void => {};

/**
 * What one batch's calls share: a signal made only if a tool reads it, the run's one deadline
 * timer, and one list of abort listeners. Most batches make no `AbortController` and no timer.
 */
export class BatchRuntime implements CallRuntime {
  readonly #clock: Clock;
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;
  /**
   * Made on the first registration: a batch of synchronous tools registers none. A list in order of
   * registration, not a set: most batches hold one call, and a set's table is reallocated as its
   * one entry comes and goes.
   */
  #listeners: (() => void)[] | undefined;
  readonly #deadlines: RunDeadlines;

  constructor(clock: Clock, run: AbortSignal, deadlines: RunDeadlines) {
    this.#clock = clock;
    this.#deadlines = deadlines;
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
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const listener of [...listeners]) listener();
  }

  onAbort(listener: () => void): () => void {
    if (this.#aborted) return noop;
    const listeners = this.#listeners;
    if (listeners === undefined) this.#listeners = [listener];
    else listeners.push(listener);
    return () => this.#off(listener);
  }

  #off(listener: () => void): void {
    const listeners = this.#listeners;
    const at = listeners === undefined ? -1 : listeners.indexOf(listener);
    if (at < 0) return;
    const list = listeners as (() => void)[];
    list.copyWithin(at, at + 1);
    list.pop();
  }

  deadline(ms: number, onTimeout: () => void): () => void {
    return this.#deadlines.add(ms, onTimeout);
  }

  /** The batch is over: its abort listeners are dropped (deadlines are unregistered by their calls). */
  dispose(): void {
    this.#listeners = undefined;
  }
}
