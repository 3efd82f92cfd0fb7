/** A value now, or one a promise will bring. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Runs `next` on the value, at once when it is already here: a stage whose callbacks are all
 * synchronous costs no promise and no microtask.
 */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** What an emit returned, as something {@link andThen} waits for when it must (any thenable). */
export function emitted(result: void | PromiseLike<void>): MaybePromise<void> {
  return result === undefined || result instanceof Promise ? result : Promise.resolve(result);
}
