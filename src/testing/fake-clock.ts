import type { Clock, TimerHandle } from '../time/clock.js';

interface Timer {
  id: number;
  at: number;
  callback: () => void;
}

/** A clock that moves only when told. Start it at a real epoch value so unit bugs show. */
export interface FakeClock extends Clock {
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void;
  /** Sets the time (forward or back) without firing anything past due until the next advance. */
  set(epochMs: number): void;
  /** Timers not yet fired. */
  readonly pendingTimers: number;
  /**
   * Lets `promise` run: flushes pending work, and whenever nothing else can happen, jumps to the
   * next timer. For tests of timeouts and wall-clock limits without sleeping.
   */
  runUntilSettled<T>(promise: Promise<T>): Promise<T>;
}

/** 2026-01-01T00:00:00Z: a real epoch value, so seconds-versus-milliseconds mistakes are visible. */
export const fakeClockEpoch = 1_767_225_600_000;

/**
 * A deterministic clock for tests.
 *
 * @example
 * const clock = fakeClock();
 * clock.setTimeout(() => console.log('fired'), 1000);
 * clock.advance(1000); // fired
 */
export function fakeClock(startMs: number = fakeClockEpoch): FakeClock {
  let now = startMs;
  let nextId = 1;
  const timers: Timer[] = [];
  const fireDue = (until: number) => {
    while (true) {
      let earliest: Timer | undefined;
      for (const timer of timers)
        if (
          timer.at <= until &&
          (!earliest || timer.at < earliest.at || (timer.at === earliest.at && timer.id < earliest.id))
        )
          earliest = timer;
      if (!earliest) break;
      timers.splice(timers.indexOf(earliest), 1);
      now = Math.max(now, earliest.at);
      earliest.callback();
    }
    now = Math.max(now, until);
  };
  const flush = () => new Promise<void>((resolve) => globalThis.setTimeout(resolve, 0));
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const timer = { id: nextId++, at: now + Math.max(0, ms), callback };
      timers.push(timer);
      return timer.id as TimerHandle;
    },
    clearTimeout(handle) {
      const index = timers.findIndex((timer) => timer.id === handle);
      if (index >= 0) timers.splice(index, 1);
    },
    advance(ms) {
      fireDue(now + ms);
    },
    set(epochMs) {
      now = epochMs;
    },
    get pendingTimers() {
      return timers.length;
    },
    async runUntilSettled<T>(promise: Promise<T>): Promise<T> {
      let settled = false;
      const watched = promise.finally(() => {
        settled = true;
      });
      watched.catch(() => {});
      for (let rounds = 0; rounds < 100_000; rounds++) {
        await flush();
        if (settled) return watched;
        if (timers.length === 0) continue;
        const next = Math.min(...timers.map((timer) => timer.at));
        fireDue(next);
      }
      throw new Error('fakeClock.runUntilSettled: the promise did not settle');
    },
  };
}
