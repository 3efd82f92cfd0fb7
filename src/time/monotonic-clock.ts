import type { Clock, TimerHandle } from './clock.js';

/** The longest delay a host timer takes; longer ones fire at once in Node and browsers. */
const maxTimerMs = 2_147_483_647;

type HostTimer = ReturnType<typeof globalThis.setTimeout>;

/** A timer longer than the host allows, re-armed in chunks against the monotonic time. */
interface ChunkedTimer {
  host: HostTimer | undefined;
}

const elapsed = () => globalThis.performance.now();

let last = Number.NEGATIVE_INFINITY;

/**
 * A clock that never goes back: `performance.timeOrigin + performance.now()`, whole milliseconds.
 * It reads as epoch milliseconds (the wall time when the process started, plus the time elapsed
 * since), but a step of the system clock (an NTP correction, a VM resumed, a person setting the
 * date) does not move it. The default of the circuit breakers, whose cooldowns are durations.
 * Timers are the host's, like `systemClock`: longer than 2³¹−1 ms are chunked, `Infinity` never fires.
 */
export const monotonicClock: Clock = {
  now: () => {
    const now = Math.floor(globalThis.performance.timeOrigin + elapsed());
    if (now > last) last = now;
    return last;
  },
  setTimeout: (callback, ms) => {
    if (ms <= maxTimerMs) return globalThis.setTimeout(callback, ms) as unknown as TimerHandle;
    const timer: ChunkedTimer = { host: undefined };
    // `Infinity` (or NaN) never fires; anything finite past the cap is waited out in chunks.
    if (!(ms < Number.POSITIVE_INFINITY)) return timer as unknown as TimerHandle;
    const due = elapsed() + ms;
    const arm = () => {
      const left = due - elapsed();
      if (left <= maxTimerMs) timer.host = globalThis.setTimeout(callback, Math.max(0, left));
      else timer.host = globalThis.setTimeout(arm, maxTimerMs);
    };
    arm();
    return timer as unknown as TimerHandle;
  },
  clearTimeout: (handle) => {
    if (typeof handle === 'object' && handle !== null && 'host' in handle)
      globalThis.clearTimeout((handle as ChunkedTimer).host);
    else globalThis.clearTimeout(handle as HostTimer);
  },
};

/**
 * A view of `source` that never goes back: between two readings it moves forward by what the
 * source moved forward and ignores a backward step, so a clock set back an hour stretches neither a
 * cooldown nor a window by an hour (forward time the source skipped between readings is lost, at
 * most what elapsed since the last reading). Timers are the source's. `monotonicClock` is returned
 * as it is.
 */
export function monotonicView(source: Clock): Clock {
  if (source === monotonicClock) return source;
  let sourceLast: number | undefined;
  let view = 0;
  return {
    now: () => {
      const now = source.now();
      if (sourceLast === undefined) {
        sourceLast = now;
        view = now;
      } else {
        const step = now - sourceLast;
        if (step > 0) view += step;
        if (Number.isFinite(now)) sourceLast = now;
      }
      return view;
    },
    setTimeout: (callback, ms) => source.setTimeout(callback, ms),
    clearTimeout: (handle) => source.clearTimeout(handle),
  };
}
