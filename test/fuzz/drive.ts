import { type FakeClock, fakeClock } from '../../src/testing/fake-clock.js';
import type { Clock, TimerHandle } from '../../src/time/clock.js';

/** A {@link fakeClock} that also says when its next timer is due, so a driver can tell a hang from a wait. */
export interface DrivenClock extends Clock {
  readonly fake: FakeClock;
  /** The earliest due time of a pending timer, or undefined when none is pending. */
  nextDue(): number | undefined;
  /** Every timer armed so far: its delay, and whether it fired or was cleared. */
  readonly timers: { ms: number; fired: boolean; cleared: boolean }[];
}

export function drivenClock(): DrivenClock {
  const fake = fakeClock();
  const due = new Map<TimerHandle, number>();
  const timers: DrivenClock['timers'][number][] = [];
  const entries = new Map<TimerHandle, DrivenClock['timers'][number]>();
  return {
    fake,
    timers,
    now: () => fake.now(),
    setTimeout(callback, ms) {
      const entry = { ms, fired: false, cleared: false };
      timers.push(entry);
      const handle = fake.setTimeout(() => {
        due.delete(handle);
        entry.fired = true;
        callback();
      }, ms);
      entries.set(handle, entry);
      // fakeClock arms `now + max(0, ms)`; NaN never fires.
      due.set(handle, fake.now() + Math.max(0, ms));
      return handle;
    },
    clearTimeout(handle) {
      const entry = entries.get(handle);
      if (entry && !entry.fired && due.has(handle)) entry.cleared = true;
      due.delete(handle);
      fake.clearTimeout(handle);
    },
    nextDue() {
      let next: number | undefined;
      for (const at of due.values()) if (!Number.isNaN(at) && (next === undefined || at < next)) next = at;
      return next;
    },
  };
}

export type Driven<T> =
  | { settled: true; ok: true; value: T; at: number }
  | { settled: true; ok: false; error: unknown; at: number }
  | { settled: false; at: number; why: string };

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Lets `promise` run on `clock` the way `clock.fake.runUntilSettled` does (flush, then jump to the
 * next timer), but reports a hang instead of spinning: nothing pending on the clock and still
 * unsettled after `idleRounds` flushes means nothing can ever wake it.
 */
export async function drive<T>(
  clock: DrivenClock,
  promise: Promise<T>,
  { idleRounds = 25, maxRounds = 20_000 }: { idleRounds?: number; maxRounds?: number } = {},
): Promise<Driven<T>> {
  let outcome: Driven<T> | undefined;
  promise.then(
    (value) => {
      outcome = { settled: true, ok: true, value, at: clock.now() };
    },
    (error: unknown) => {
      outcome = { settled: true, ok: false, error, at: clock.now() };
    },
  );
  let idle = 0;
  for (let round = 0; round < maxRounds; round++) {
    await macrotask();
    if (outcome) return outcome;
    const next = clock.nextDue();
    if (next === undefined) {
      if (++idle >= idleRounds) return { settled: false, at: clock.now(), why: 'no timer left' };
      continue;
    }
    idle = 0;
    clock.fake.advance(Math.max(0, next - clock.now()));
  }
  return { settled: false, at: clock.now(), why: `still pending after ${maxRounds} rounds` };
}
