import type { Clock, TimerHandle } from '../../time/clock.js';

interface Deadline {
  at: number;
  onTimeout: () => void;
}

/**
 * Every tool call's deadline in the run, on one timer. The timer is armed for the earliest
 * deadline and left armed when calls settle early: a later batch's deadline (the same timeout,
 * later) waits for it to fire and re-arm, so a run of quick calls sets about one timer per
 * timeout span instead of one per call. `dispose` clears it when the run ends.
 */
export class RunDeadlines {
  readonly #clock: Clock;
  readonly #pending = new Set<Deadline>();
  #timer: TimerHandle | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  add(ms: number, onTimeout: () => void): () => void {
    const entry: Deadline = { at: this.#clock.now() + ms, onTimeout };
    this.#pending.add(entry);
    if (entry.at < this.#timerAt) this.#arm(entry.at);
    return () => {
      this.#pending.delete(entry);
    };
  }

  dispose(): void {
    this.#pending.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#clock.setTimeout(() => this.#fire(), Math.max(0, at - this.#clock.now()));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of [...this.#pending]) {
      if (entry.at <= now) {
        this.#pending.delete(entry);
        entry.onTimeout();
      } else if (entry.at < next) next = entry.at;
    }
    if (next < Number.POSITIVE_INFINITY && this.#timer === undefined) this.#arm(next);
  }
}
