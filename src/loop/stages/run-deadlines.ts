import type { Clock, TimerHandle } from '../../time/clock.js';

/** One registered deadline, linked in order of registration. */
interface Deadline {
  at: number;
  onTimeout: () => void;
  previous: Deadline | undefined;
  next: Deadline | undefined;
  /** Still registered: not fired and not cancelled. */
  pending: boolean;
}

/**
 * Every tool call's deadline in the run, on one timer. The timer is armed for the earliest
 * deadline and left armed when calls settle early: a later batch's deadline (the same timeout,
 * later) waits for it to fire and re-arm, so a run of quick calls sets about one timer per
 * timeout span instead of one per call. `dispose` clears it when the run ends.
 */
export class RunDeadlines {
  readonly #clock: Clock;
  /**
   * The pending deadlines, oldest first, as a linked list: a call adds one and removes it a moment
   * later, which a set pays for by reallocating its table as its size goes from 0 to 1 and back.
   */
  #first: Deadline | undefined;
  #last: Deadline | undefined;
  #timer: TimerHandle | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  add(ms: number, onTimeout: () => void): () => void {
    const entry: Deadline = {
      at: this.#clock.now() + ms,
      onTimeout,
      previous: this.#last,
      next: undefined,
      pending: true,
    };
    if (this.#last) this.#last.next = entry;
    else this.#first = entry;
    this.#last = entry;
    if (entry.at < this.#timerAt) this.#arm(entry.at);
    return () => this.#remove(entry);
  }

  #remove(entry: Deadline): void {
    if (!entry.pending) return;
    entry.pending = false;
    if (entry.previous) entry.previous.next = entry.next;
    else this.#first = entry.next;
    if (entry.next) entry.next.previous = entry.previous;
    else this.#last = entry.previous;
    entry.previous = undefined;
    entry.next = undefined;
  }

  dispose(): void {
    while (this.#first) this.#remove(this.#first);
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
    // The entries pending now, in order (a callback may add or remove some; those listed still fire).
    const due: Deadline[] = [];
    for (let entry = this.#first; entry; entry = entry.next) due.push(entry);
    for (const entry of due) {
      if (entry.at <= now) {
        this.#remove(entry);
        entry.onTimeout();
      } else if (entry.at < next) next = entry.at;
    }
    if (next < Number.POSITIVE_INFINITY && this.#timer === undefined) this.#arm(next);
  }
}
