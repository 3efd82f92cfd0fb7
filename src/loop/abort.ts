/** Why a signal inside the loop was aborted. */
export type AbortCause =
  | { type: 'cancelled'; reason: string }
  | { type: 'wall_clock' }
  | { type: 'timeout'; ms: number }
  | { type: 'fatal_sibling'; callId: string };

/**
 * A child controller that aborts when any parent does. `dispose()` removes the listeners it added,
 * so a long run leaves none behind on the caller's signal.
 */
export function linkedController(...parents: (AbortSignal | undefined)[]): {
  controller: AbortController;
  dispose: () => void;
} {
  const controller = new AbortController();
  const cleanups: (() => void)[] = [];
  for (const parent of parents) {
    if (!parent) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = () => controller.abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => parent.removeEventListener('abort', onAbort));
  }
  return {
    controller,
    dispose: () => {
      for (const cleanup of cleanups) cleanup();
      cleanups.length = 0;
    },
  };
}

/**
 * Settles with the promise, or with `{ aborted: true }` as soon as the signal aborts, whichever is
 * first. A callee that ignores its signal cannot hold the loop hostage; its late result is dropped.
 */
export async function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal,
): Promise<{ aborted: false; value: T } | { aborted: true; reason: unknown }> {
  if (signal.aborted) {
    promise.catch(() => {});
    return { aborted: true, reason: signal.reason };
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<{ aborted: true; reason: unknown }>((resolve) => {
    onAbort = () => resolve({ aborted: true, reason: signal.reason });
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise.then((value) => ({ aborted: false as const, value })), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    promise.catch(() => {});
  }
}

/** The {@link AbortCause} a signal carries, or a cancellation if it carries something else. */
export function abortCauseOf(signal: AbortSignal): AbortCause {
  try {
    return causeOf(signal.reason);
  } catch {
    // A reason that cannot be read (a revoked Proxy, a throwing getter) is still a cancellation.
    return { type: 'cancelled', reason: "aborted (the signal's reason could not be read)" };
  }
}

function causeOf(reason: unknown): AbortCause {
  if (typeof reason === 'object' && reason !== null && 'type' in reason) {
    const type = (reason as { type: unknown }).type;
    if (type === 'wall_clock' || type === 'timeout' || type === 'fatal_sibling' || type === 'cancelled') {
      return reason as AbortCause;
    }
  }
  const text = reason instanceof Error ? reason.message : reason === undefined ? 'aborted' : String(reason);
  return { type: 'cancelled', reason: typeof text === 'string' ? text : 'aborted' };
}
