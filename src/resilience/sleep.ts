import { type Clock, systemClock } from '../time/clock.js';

/** Raised by {@link sleep} when its signal aborts. */
export class SleepAbortedError extends Error {
  override name = 'AbortError' as const;
}

/**
 * Waits `ms` on the clock. Rejects as soon as the signal aborts (with an `AbortError`), and removes
 * its listener either way: no orphaned retry loop, no leaked listener.
 */
export function sleep(
  ms: number,
  options: { signal?: AbortSignal | undefined; clock?: Clock } = {},
): Promise<void> {
  const clock = options.clock ?? systemClock;
  const signal = options.signal;
  if (signal?.aborted)
    return Promise.reject(new SleepAbortedError('aborted before sleeping', { cause: signal.reason }));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new SleepAbortedError('aborted while sleeping', { cause: signal?.reason }));
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
