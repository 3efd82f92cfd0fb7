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

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms) as unknown as TimerHandle,
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
};

/** A source of uniform numbers in [0, 1). */
export type RandomSource = () => number;

/** Makes ids; injected so traces and tests are reproducible. */
export type IdGenerator = (prefix: string) => string;

/** Random ids from `crypto.randomUUID` (available in browsers and Node 20). */
export const randomIds: IdGenerator = (prefix) => `${prefix}_${globalThis.crypto.randomUUID()}`;
