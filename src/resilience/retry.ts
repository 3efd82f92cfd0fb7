import { type ErrorInfo, errorInfo } from '../errors/error-info.js';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import { type Clock, type RandomSource, systemClock } from '../time/clock.js';
import { type Backoff, fullJitterBackoff } from './backoff.js';
import type { Breaker, BreakerPermit } from './circuit-breaker.js';
import { type Classification, type ClassifyOptions, classifyError } from './classify-error.js';
import type { RetryBudget, RetryGrant } from './retry-budget.js';
import { sleep } from './sleep.js';

/** A control (budget, breaker, classifier, callback) that threw, hung or answered nonsense during a retry. */
export interface RetryControlError {
  control:
    | 'breaker.acquire'
    | 'breaker.record'
    | 'budget.withdraw'
    | 'budget.deposit'
    | 'classify'
    | 'onRetry'
    | 'backoff'
    | 'sleep'
    | 'internal';
  /** True when it did not answer within `controlTimeoutMs`. */
  timedOut: boolean;
  error: ErrorInfo;
}

/**
 * How a retried call ended. Switch on `kind`. `controlErrors` is present only when a control failed
 * along the way; the kind says what was done about it.
 */
export type RetryOutcome<T> = { controlErrors?: RetryControlError[] } & (
  | { kind: 'ok'; value: T; attempts: number }
  /** The error is not worth retrying (a 400, a validation error): it failed on its first try. */
  | { kind: 'terminal'; error: unknown; classification: Classification; attempts: number }
  /** The shared budget had no token for another retry (or could not be asked). */
  | { kind: 'retry_denied'; error: unknown; classification: Classification; attempts: number }
  /** The breaker is open (or could not be asked): the call was not attempted. */
  | { kind: 'circuit_open'; retryInMs: number; attempts: number; error: unknown }
  | { kind: 'exhausted'; error: unknown; classification: Classification; attempts: number }
  | { kind: 'cancelled'; attempts: number; error: unknown }
);

export interface RetryOptions {
  /** Total attempts, the first included (3 means one try and two retries). @default 3 */
  maxAttempts?: number;
  /** @default fullJitterBackoff({ baseMs: 100, capMs: 20_000 }) */
  backoff?: Backoff;
  /** Shared by everything that retries; a denial fails the call now. */
  budget?: RetryBudget;
  /** Per dependency; open means no attempt at all. */
  breaker?: Breaker;
  /** @default classifyError */
  classify?: (error: unknown) => Classification;
  /** Passed to the default classifier. */
  classifyOptions?: ClassifyOptions;
  /** Retry-After is honoured up to this much beyond the backoff (AWS: 5 s). @default 5_000 */
  maxRetryAfterExtraMs?: number;
  /**
   * How long (real time) a budget or breaker call may take before it counts as failed: a hung
   * `acquire` fails closed (`circuit_open`), a hung `withdraw` denies the retry, a hung `deposit` or
   * `record` is reported and the outcome stands. @default 2_000
   */
  controlTimeoutMs?: number;
  signal?: AbortSignal;
  clock?: Clock;
  /** @default Math.random */
  random?: RandomSource;
  /** Called before each wait. A callback that throws is reported on the outcome, never rethrown. */
  onRetry?: (event: {
    attempt: number;
    delayMs: number;
    classification: Classification;
    error: unknown;
  }) => void;
}

/** What `fn` is given on each attempt. */
export interface AttemptContext {
  /** 1 for the first try. */
  attempt: number;
  signal: AbortSignal | undefined;
}

type Guarded<T> = { ok: true; value: T } | { ok: false; failure: RetryControlError; aborted: boolean };

function failed(control: RetryControlError['control'], error: unknown, timedOut = false): RetryControlError {
  return { control, timedOut, error: errorInfo(error) };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Runs one control call so that nothing escapes: a throw, a rejection, a hang past `timeoutMs` or
 * an abort of `signal` becomes a failure. A synchronous answer stays synchronous (no timer, no tick).
 */
function guard<T>(
  control: RetryControlError['control'],
  run: () => T | Promise<T>,
  timeoutMs: number,
  signal?: AbortSignal,
): Guarded<T> | Promise<Guarded<T>> {
  let result: T | Promise<T>;
  try {
    result = run();
    if (!isThenable(result)) return { ok: true, value: result };
  } catch (error) {
    return { ok: false, failure: failed(control, error), aborted: false };
  }
  return new Promise<Guarded<T>>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: Guarded<T>) => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () =>
      finish({
        ok: false,
        failure: failed(control, new Error(`aborted while waiting for ${control}`)),
        aborted: true,
      });
    // Past the host's longest timer (about 24.8 days) there is no timeout at all.
    if (timeoutMs <= 2_147_483_647)
      timer = setTimeout(
        () =>
          finish({
            ok: false,
            failure: failed(control, new Error(`${control} did not answer within ${timeoutMs} ms`), true),
            aborted: false,
          }),
        timeoutMs,
      );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(result).then(
      (value) => finish({ ok: true, value }),
      (error: unknown) => finish({ ok: false, failure: failed(control, error), aborted: false }),
    );
  });
}

/** Reads fields of an answer; a non-object, a throwing getter or a Proxy trap gives undefined. */
function readFields(value: unknown, keys: readonly string[]): unknown[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return keys.map((key) => (value as Record<string, unknown>)[key]);
  } catch {
    return undefined;
  }
}

const classificationKinds = new Set(['transient', 'throttled', 'terminal', 'cancelled']);

/** A classifier's answer as plain, checked data; anything unreadable or unknown is a failure. */
function checkedClassification(value: unknown): Classification | undefined {
  const fields = readFields(value, ['kind', 'reason', 'status', 'retryAfterMs']);
  if (!fields) return undefined;
  const [kind, reason, status, retryAfterMs] = fields;
  if (typeof kind !== 'string' || !classificationKinds.has(kind)) return undefined;
  const checked: Classification = {
    kind: kind as Classification['kind'],
    reason: typeof reason === 'string' ? reason : 'custom classifier',
  };
  if (typeof status === 'number' && Number.isFinite(status)) checked.status = status;
  if (typeof retryAfterMs === 'number' && retryAfterMs >= 0 && retryAfterMs < Number.POSITIVE_INFINITY)
    checked.retryAfterMs = retryAfterMs;
  return checked;
}

/** A permit as plain, checked data (the original object still goes back to `record`). */
function checkedPermit(value: unknown): BreakerPermit | undefined {
  const fields = readFields(value, ['kind', 'probe', 'retryInMs']);
  if (!fields) return undefined;
  const [kind, probe, retryInMs] = fields;
  if (kind === 'allowed') return { kind, probe: probe === true };
  if (kind === 'open')
    return { kind, retryInMs: typeof retryInMs === 'number' && retryInMs >= 0 ? retryInMs : 0 };
  return undefined;
}

/**
 * Calls `fn` until it succeeds or a control says stop: classify → terminal errors end it at once →
 * breaker → budget → backoff (honouring Retry-After) → attempt. Resolves to a labeled outcome and
 * never rejects for anything `fn` or a control does: a classifier, budget, breaker or callback that
 * throws, hangs or answers nonsense is reported on `controlErrors`, failing closed (a breaker that
 * cannot answer is `circuit_open`, a budget that cannot answer denies the retry, a classifier that
 * fails makes the error terminal). After a success, a failed `deposit` or `record` never changes the
 * result. Only invalid options reject, with a `ConfigurationError`.
 *
 * @example
 * const outcome = await retry(({ signal }) => fetchJson(url, { signal }), { budget, breaker, maxAttempts: 3 });
 * if (outcome.kind === 'ok') use(outcome.value);
 */
export async function retry<T>(
  fn: (context: AttemptContext) => Promise<T>,
  options: RetryOptions = {},
): Promise<RetryOutcome<T>> {
  const run = new RetryRun<T>(options);
  const { signal, breaker, budget } = options;
  try {
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) return run.end({ kind: 'cancelled', attempts: attempt - 1, error: signal.reason });
      let permit: BreakerPermit | undefined;
      if (breaker) {
        const acquired = await run.acquire(breaker, attempt);
        if (acquired.kind === 'ended') return acquired.outcome;
        permit = acquired.permit;
      }
      run.attempts = attempt;
      let value: T;
      try {
        value = await fn({ attempt, signal });
      } catch (error) {
        const ended = await run.failed(error, attempt, permit);
        if (ended) return ended;
        continue;
      }
      // Success. What follows only books it: a failing breaker or budget store is reported, the value comes back.
      if (permit) {
        const recording = run.record(permit, true);
        if (recording) await recording;
      }
      if (budget) {
        const depositing = run.deposit(budget);
        if (depositing) await depositing;
      }
      return run.end({ kind: 'ok', value, attempts: attempt });
    }
  } catch (internal) {
    // Nothing above should throw; if something does, it still ends in a label.
    return run.internal(internal);
  }
}

/** The state of one {@link retry} call, and everything it does besides calling `fn`. */
class RetryRun<T> {
  readonly #options: RetryOptions;
  readonly #maxAttempts: number;
  readonly #controlTimeoutMs: number;
  readonly #extraMs: number;
  #backoff: Backoff;
  #lastGrant: RetryGrant | undefined;
  #lastError: unknown;
  #controlErrors: RetryControlError[] | undefined;
  attempts = 0;

  constructor(options: RetryOptions) {
    const maxAttempts = options.maxAttempts ?? 3;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
      throw new ConfigurationError('maxAttempts', `must be an integer ≥ 1, got ${maxAttempts}`);
    const controlTimeoutMs = options.controlTimeoutMs ?? 2_000;
    if (!(controlTimeoutMs > 0))
      throw new ConfigurationError('controlTimeoutMs', `must be a number > 0, got ${controlTimeoutMs}`);
    const extraMs = options.maxRetryAfterExtraMs ?? 5_000;
    if (!(extraMs >= 0))
      throw new ConfigurationError('maxRetryAfterExtraMs', `must be a number ≥ 0, got ${extraMs}`);
    this.#options = options;
    this.#maxAttempts = maxAttempts;
    this.#controlTimeoutMs = controlTimeoutMs;
    this.#extraMs = extraMs;
    this.#backoff = options.backoff ?? fullJitterBackoff();
  }

  end<O extends RetryOutcome<T>>(outcome: O): O {
    if (this.#controlErrors) outcome.controlErrors = this.#controlErrors;
    return outcome;
  }

  internal(error: unknown): RetryOutcome<T> {
    this.#report(failed('internal', error));
    return this.end({
      kind: 'terminal',
      error: this.#lastError,
      classification: { kind: 'terminal', reason: 'retry failed internally' },
      attempts: this.attempts,
    });
  }

  async acquire(
    breaker: Breaker,
    attempt: number,
  ): Promise<{ kind: 'ended'; outcome: RetryOutcome<T> } | { kind: 'allowed'; permit: BreakerPermit }> {
    const signal = this.#options.signal;
    let acquired = guard('breaker.acquire', () => breaker.acquire(), this.#controlTimeoutMs, signal);
    if (acquired instanceof Promise) acquired = await acquired;
    const checked = acquired.ok ? checkedPermit(acquired.value) : undefined;
    if (!acquired.ok || !checked) {
      if (!acquired.ok && acquired.aborted)
        return {
          kind: 'ended',
          outcome: this.end({ kind: 'cancelled', attempts: attempt - 1, error: signal?.reason }),
        };
      this.#report(
        acquired.ok
          ? failed('breaker.acquire', new Error('acquire returned no valid permit'))
          : acquired.failure,
      );
      // A breaker that cannot answer fails closed: no attempt, no spend.
      return {
        kind: 'ended',
        outcome: this.end({
          kind: 'circuit_open',
          retryInMs: 0,
          attempts: attempt - 1,
          error: this.#lastError,
        }),
      };
    }
    if (checked.kind === 'open')
      return {
        kind: 'ended',
        outcome: this.end({
          kind: 'circuit_open',
          retryInMs: checked.retryInMs,
          attempts: attempt - 1,
          error: this.#lastError,
        }),
      };
    // The breaker's own permit object goes back to it: it may know its permits by identity.
    return { kind: 'allowed', permit: acquired.value };
  }

  /** Synchronous when the breaker is: no extra tick on the success path. */
  record(permit: BreakerPermit, ok: boolean): undefined | Promise<void> {
    const breaker = this.#options.breaker;
    if (!breaker) return undefined;
    const recorded = guard('breaker.record', () => breaker.record(permit, ok), this.#controlTimeoutMs);
    if (!(recorded instanceof Promise)) {
      if (!recorded.ok) this.#report(recorded.failure);
      return undefined;
    }
    return recorded.then((answer) => {
      if (!answer.ok) this.#report(answer.failure);
    });
  }

  deposit(budget: RetryBudget): undefined | Promise<void> {
    const grant = this.#lastGrant;
    const deposited = guard('budget.deposit', () => budget.deposit(grant), this.#controlTimeoutMs);
    if (!(deposited instanceof Promise)) {
      if (!deposited.ok) this.#report(deposited.failure);
      return undefined;
    }
    return deposited.then((answer) => {
      if (!answer.ok) this.#report(answer.failure);
    });
  }

  /** After a failed attempt: an outcome to end with, or undefined once the wait before the next attempt is over. */
  async failed(
    error: unknown,
    attempt: number,
    permit: BreakerPermit | undefined,
  ): Promise<RetryOutcome<T> | undefined> {
    const options = this.#options;
    const { signal, budget } = options;
    this.#lastError = error;
    const classification = this.#classify(error);
    const dependencyFailed = classification.kind === 'transient' || classification.kind === 'throttled';
    // A 400 says the dependency is up and our request is wrong: it must not open the circuit.
    if (permit && classification.kind !== 'cancelled') {
      const recording = this.record(permit, !dependencyFailed);
      if (recording) await recording;
    }
    if (classification.kind === 'cancelled' || signal?.aborted)
      return this.end({ kind: 'cancelled', attempts: attempt, error });
    if (classification.kind === 'terminal')
      return this.end({ kind: 'terminal', error, classification, attempts: attempt });
    if (attempt >= this.#maxAttempts)
      return this.end({ kind: 'exhausted', error, classification, attempts: attempt });
    if (budget) {
      const kind = classification.kind === 'throttled' ? 'throttled' : 'transient';
      let withdrawn = guard('budget.withdraw', () => budget.withdraw(kind), this.#controlTimeoutMs, signal);
      if (withdrawn instanceof Promise) withdrawn = await withdrawn;
      if (!withdrawn.ok && withdrawn.aborted)
        return this.end({ kind: 'cancelled', attempts: attempt, error });
      if (!withdrawn.ok) this.#report(withdrawn.failure);
      // A budget that cannot be asked denies: no unfunded retry.
      if (!withdrawn.ok || readFields(withdrawn.value, ['granted'])?.[0] !== true)
        return this.end({ kind: 'retry_denied', error, classification, attempts: attempt });
      this.#lastGrant = withdrawn.value;
    }
    let baseDelay: number;
    try {
      const step = this.#backoff.next(options.random ?? Math.random);
      this.#backoff = step.backoff;
      baseDelay = step.delayMs;
    } catch (backoffError) {
      this.#report(failed('backoff', backoffError));
      return this.end({ kind: 'exhausted', error, classification, attempts: attempt });
    }
    // NaN or negative waits nothing; an endless wait would never come back, so it ends the retry.
    if (typeof baseDelay !== 'number' || !(baseDelay >= 0)) baseDelay = 0;
    if (baseDelay === Number.POSITIVE_INFINITY)
      return this.end({ kind: 'exhausted', error, classification, attempts: attempt });
    const hint = classification.retryAfterMs;
    const delayMs =
      hint === undefined ? baseDelay : Math.max(baseDelay, Math.min(hint, baseDelay + this.#extraMs));
    if (options.onRetry) {
      try {
        const returned: unknown = options.onRetry({ attempt, delayMs, classification, error });
        // An observer is not waited for; a promise it returns must not reject unhandled.
        if (isThenable(returned)) Promise.resolve(returned).catch(() => {});
      } catch (observerError) {
        this.#report(failed('onRetry', observerError));
      }
    }
    try {
      await sleep(delayMs, { signal, clock: options.clock ?? systemClock });
    } catch (sleepError) {
      if (signal?.aborted) return this.end({ kind: 'cancelled', attempts: attempt, error });
      this.#report(failed('sleep', sleepError));
      return this.end({ kind: 'exhausted', error, classification, attempts: attempt });
    }
    return undefined;
  }

  #classify(error: unknown): Classification {
    const options = this.#options;
    if (!options.classify) return classifyError(error, options.classifyOptions);
    try {
      // A classifier is synchronous; anything but a valid classification (a promise too) is unusable.
      const classification = checkedClassification(options.classify(error));
      if (classification) return classification;
      this.#report(failed('classify', new Error('the classifier returned no valid classification')));
    } catch (classifierError) {
      this.#report(failed('classify', classifierError));
    }
    // An error nobody could classify is not retried: a retry must be earned.
    return { kind: 'terminal', reason: 'classifier failed' };
  }

  #report(failure: RetryControlError): void {
    this.#controlErrors ??= [];
    this.#controlErrors.push(failure);
  }
}

/** Thrown by {@link retryOrThrow} when a retried call did not succeed; `outcome` says how it ended. */
export class RetryError extends ReinsError {
  override name = 'RetryError' as const;
  readonly outcome: Exclude<RetryOutcome<unknown>, { kind: 'ok' }>;

  constructor(outcome: Exclude<RetryOutcome<unknown>, { kind: 'ok' }>) {
    // errorInfo never throws: a Proxy or a throwing `message` getter still makes a RetryError.
    const cause = outcome.error === undefined ? '' : `: ${errorInfo(outcome.error).message}`;
    super(outcome.kind, `${outcome.kind} after ${outcome.attempts} attempt(s)${cause}`, {
      cause: outcome.error,
    });
    this.outcome = outcome;
    const status = 'classification' in outcome ? outcome.classification.status : undefined;
    if (status !== undefined) (this as unknown as { status: number }).status = status;
  }
}

/** {@link retry}, for code that wants the value or an exception (the cause attached). */
export async function retryOrThrow<T>(
  fn: (context: AttemptContext) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const outcome = await retry(fn, options);
  if (outcome.kind === 'ok') return outcome.value;
  throw new RetryError(outcome);
}
