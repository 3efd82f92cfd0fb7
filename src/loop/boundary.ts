import { type ErrorInfo, errorInfo } from '../errors/error-info.js';
import type { HardErrorSource } from './outcome.js';

/** What a user callback came to inside the boundary. */
export type Guarded<T> =
  | { ok: true; value: T }
  /** It threw (or rejected): the run ends `hard_error` with this source. */
  | { ok: false; stopped: false; source: HardErrorSource; error: ErrorInfo }
  /** The run's signal aborted first (wall clock, cancellation): the callback is abandoned. */
  | { ok: false; stopped: true };

/**
 * The one error boundary: runs a user callback (authorizer, preconditions, schema, invariants,
 * predicates, world state, sinks, stores, limiters, `prepareStep`) so that whatever it throws comes
 * back as a value naming its source, described safely whatever was thrown, and so that a callback
 * that never settles is abandoned when the run's signal aborts (the `maxWallMs` timer aborts it).
 * A synchronous result costs no promise and no listener.
 */
export function guard<T>(
  source: HardErrorSource,
  callback: () => T | PromiseLike<T>,
  signal: AbortSignal,
): Guarded<T> | Promise<Guarded<T>> {
  let result: T | PromiseLike<T>;
  try {
    result = callback();
  } catch (thrown) {
    return { ok: false, stopped: false, source, error: errorInfo(thrown) };
  }
  if (!isThenable(result)) return { ok: true, value: result };
  return settleOrStop(source, result, signal);
}

/** The same boundary, always as a promise. */
export async function guardAsync<T>(
  source: HardErrorSource,
  callback: () => T | PromiseLike<T>,
  signal: AbortSignal,
): Promise<Guarded<T>> {
  return guard(source, callback, signal);
}

/** Whether a value is a thenable (a getter on `then` that throws says no). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  // Inside the try: `instanceof` reads a Proxy's prototype through a trap that may throw.
  try {
    return value instanceof Promise || typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
}

function settleOrStop<T>(
  source: HardErrorSource,
  pending: PromiseLike<T>,
  signal: AbortSignal,
): Promise<Guarded<T>> {
  if (signal.aborted) {
    Promise.resolve(pending).then(undefined, () => {});
    return Promise.resolve({ ok: false, stopped: true });
  }
  return new Promise<Guarded<T>>((resolve) => {
    const onAbort = () => resolve({ ok: false, stopped: true });
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(pending).then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok: true, value });
      },
      (thrown: unknown) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok: false, stopped: false, source, error: errorInfo(thrown) });
      },
    );
  });
}
