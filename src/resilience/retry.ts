import { ReinsError } from '../errors/reins-error.js';
import { type Clock, type RandomSource, systemClock } from '../time/clock.js';
import { type Backoff, fullJitterBackoff } from './backoff.js';
import type { Breaker, BreakerPermit } from './circuit-breaker.js';
import { type Classification, type ClassifyOptions, classifyError } from './classify-error.js';
import type { RetryBudget, RetryGrant } from './retry-budget.js';
import { sleep } from './sleep.js';

/** How a retried call ended. Switch on `kind`. */
export type RetryOutcome<T> =
  | { kind: 'ok'; value: T; attempts: number }
  /** The error is not worth retrying (a 400, a validation error): it failed on its first try. */
  | { kind: 'terminal'; error: unknown; classification: Classification; attempts: number }
  /** The shared budget had no token for another retry. */
  | { kind: 'retry_denied'; error: unknown; classification: Classification; attempts: number }
  /** The breaker is open: the call was not attempted. */
  | { kind: 'circuit_open'; retryInMs: number; attempts: number; error: unknown }
  | { kind: 'exhausted'; error: unknown; classification: Classification; attempts: number }
  | { kind: 'cancelled'; attempts: number; error: unknown };

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
  signal?: AbortSignal;
  clock?: Clock;
  /** @default Math.random */
  random?: RandomSource;
  /** Called before each wait. */
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

/**
 * Calls `fn` until it succeeds or a control says stop: classify → terminal errors end it at once →
 * breaker → budget → backoff (honouring Retry-After) → attempt. Never throws for these outcomes.
 *
 * @example
 * const outcome = await retry(({ signal }) => fetchJson(url, { signal }), { budget, breaker, maxAttempts: 3 });
 * if (outcome.kind === 'ok') use(outcome.value);
 */
export async function retry<T>(
  fn: (context: AttemptContext) => Promise<T>,
  options: RetryOptions = {},
): Promise<RetryOutcome<T>> {
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new ReinsError('invalid_option', `maxAttempts must be an integer ≥ 1, got ${maxAttempts}`);
  const { signal, breaker, budget } = options;
  let backoff = options.backoff ?? fullJitterBackoff();
  let lastGrant: RetryGrant | undefined;
  let lastError: unknown;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return { kind: 'cancelled', attempts: attempt - 1, error: signal.reason };
    let permit: BreakerPermit | undefined;
    if (breaker) {
      permit = await breaker.acquire();
      if (permit.kind === 'open')
        return { kind: 'circuit_open', retryInMs: permit.retryInMs, attempts: attempt - 1, error: lastError };
    }
    try {
      const value = await fn({ attempt, signal });
      if (permit) await breaker?.record(permit, true);
      if (budget) await budget.deposit(lastGrant);
      return { kind: 'ok', value, attempts: attempt };
    } catch (error) {
      lastError = error;
      const classification = options.classify
        ? options.classify(error)
        : classifyError(error, options.classifyOptions);
      const dependencyFailed = classification.kind === 'transient' || classification.kind === 'throttled';
      // A 400 says the dependency is up and our request is wrong: it must not open the circuit.
      if (permit && classification.kind !== 'cancelled') await breaker?.record(permit, !dependencyFailed);
      if (classification.kind === 'cancelled' || signal?.aborted)
        return { kind: 'cancelled', attempts: attempt, error };
      if (classification.kind === 'terminal')
        return { kind: 'terminal', error, classification, attempts: attempt };
      if (attempt >= maxAttempts) return { kind: 'exhausted', error, classification, attempts: attempt };
      if (budget) {
        lastGrant = await budget.withdraw(classification.kind === 'throttled' ? 'throttled' : 'transient');
        if (!lastGrant.granted) return { kind: 'retry_denied', error, classification, attempts: attempt };
      }
      const step = backoff.next(options.random ?? Math.random);
      backoff = step.backoff;
      const hint = classification.retryAfterMs;
      const delayMs =
        hint === undefined
          ? step.delayMs
          : Math.max(step.delayMs, Math.min(hint, step.delayMs + (options.maxRetryAfterExtraMs ?? 5_000)));
      options.onRetry?.({ attempt, delayMs, classification, error });
      try {
        await sleep(delayMs, { signal, clock: options.clock ?? systemClock });
      } catch {
        return { kind: 'cancelled', attempts: attempt, error };
      }
    }
  }
}

/** Thrown by {@link retryOrThrow} when a retried call did not succeed; `outcome` says how it ended. */
export class RetryError extends ReinsError {
  override name = 'RetryError' as const;
  readonly outcome: Exclude<RetryOutcome<unknown>, { kind: 'ok' }>;

  constructor(outcome: Exclude<RetryOutcome<unknown>, { kind: 'ok' }>) {
    const cause = outcome.error instanceof Error ? `: ${outcome.error.message}` : '';
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
