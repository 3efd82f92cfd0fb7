/** A handle a {@link Clock} returns for a timer. */
export type TimerHandle = { readonly __timer: true } | number | object;

/**
 * Time as the loop sees it. Every component that measures or waits takes one, so tests pass
 * `fakeClock()` from `reins/testing` and assert exact values.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The longest delay a host timer takes; longer ones fire at once in Node and browsers. */
const maxTimerMs = 2_147_483_647;

type HostTimer = Parameters<typeof globalThis.clearTimeout>[0];

/** A timer longer than the host allows: re-armed in chunks until its time has come. */
interface ChunkedTimer {
  host: HostTimer | undefined;
}

function chunked(callback: () => void, ms: number): ChunkedTimer {
  const timer: ChunkedTimer = { host: undefined };
  // `Infinity` (or NaN) never fires; anything finite past the cap is waited out in chunks.
  if (!(ms < Number.POSITIVE_INFINITY)) return timer;
  const due = Date.now() + ms;
  const arm = () => {
    const left = due - Date.now();
    if (left <= maxTimerMs) timer.host = globalThis.setTimeout(callback, Math.max(0, left));
    else timer.host = globalThis.setTimeout(arm, maxTimerMs);
  };
  arm();
  return timer;
}

/** The real clock. Delays past 2³¹−1 ms (about 24.8 days) are chunked, and `Infinity` never fires. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) =>
    ms <= maxTimerMs
      ? (globalThis.setTimeout(callback, ms) as unknown as TimerHandle)
      : (chunked(callback, ms) as unknown as TimerHandle),
  clearTimeout: (handle) => {
    if (typeof handle === 'object' && handle !== null && 'host' in handle)
      globalThis.clearTimeout((handle as ChunkedTimer).host);
    else globalThis.clearTimeout(handle as HostTimer);
  },
};

/** A source of uniform numbers in [0, 1). */
export type RandomSource = () => number;

/** Makes ids; injected so traces and tests are reproducible. */
export type IdGenerator = (prefix: string) => string;

/** Random ids from `crypto.randomUUID` (available in browsers and Node 20). */
export const randomIds: IdGenerator = (prefix) => `${prefix}_${globalThis.crypto.randomUUID()}`;
