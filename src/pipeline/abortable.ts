/** The signal of a pipeline run without one: it never aborts. */
export const neverAborted: AbortSignal = new AbortController().signal;

/** What racing a promise with a signal gave: its value, its throw, or the signal first. */
export type Raced<T> =
  | { kind: 'value'; value: T }
  | { kind: 'thrown'; thrown: unknown }
  | { kind: 'stopped' };

/**
 * `pending` raced with `signal`: a stage that ignores its signal cannot hold the pipeline past a
 * timeout or a cancellation. The listener is removed when either settles; a late result is dropped.
 */
export function raceSignal<T>(pending: T | PromiseLike<T>, signal: AbortSignal): Promise<Raced<T>> {
  // A pipeline run without a signal: nothing can stop the stage, so no listener to add and remove.
  if (signal === neverAborted)
    return Promise.resolve(pending).then(
      (value): Raced<T> => ({ kind: 'value', value }),
      (thrown: unknown): Raced<T> => ({ kind: 'thrown', thrown }),
    );
  if (signal.aborted) {
    Promise.resolve(pending).then(undefined, () => {});
    return Promise.resolve({ kind: 'stopped' });
  }
  return new Promise((resolve) => {
    const stop = () => resolve({ kind: 'stopped' });
    signal.addEventListener('abort', stop, { once: true });
    Promise.resolve(pending).then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve({ kind: 'value', value });
      },
      (thrown: unknown) => {
        signal.removeEventListener('abort', stop);
        resolve({ kind: 'thrown', thrown });
      },
    );
  });
}

/** Why a signal aborted, in words. */
export function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'aborted';
}

/** The reason a branch's signal aborts with when its time is up. */
export class StageTimeout extends Error {
  override name = 'StageTimeout';
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`the stage ran past ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The failure of a stage its signal stopped: its timeout, or the pipeline's cancellation. */
export function stoppedFailure(
  stage: string,
  signal: AbortSignal,
):
  | { kind: 'timed_out'; stage: string; timeoutMs: number }
  | { kind: 'cancelled'; stage: string; reason: string } {
  const reason: unknown = signal.reason;
  if (reason instanceof StageTimeout) return { kind: 'timed_out', stage, timeoutMs: reason.timeoutMs };
  return { kind: 'cancelled', stage, reason: abortReason(signal) };
}
