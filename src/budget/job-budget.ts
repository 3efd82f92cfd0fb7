import { costUsdOf, type ModelPrice, type PriceTable, resolvePrice } from '../controls/price.js';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { Usage } from '../model/model.js';
import { type Clock, systemClock } from '../time/clock.js';

/** Which of a job's budgets ran out. */
export type JobBudgetName = 'job_tokens' | 'job_spend_usd' | 'job_wall_ms' | 'job_retries';

/**
 * Why a job stopped: the budget, its limit, the figure that would have passed it, and the spender
 * whose call (or retry) found it exhausted, as a path (`pipeline:triage/stage:classify`,
 * `agent:parent/tool:research/agent:research`). `unpriced` names a model no price resolves for,
 * under a USD limit (refused rather than counted free).
 */
export interface JobBudgetExceeded {
  budget: JobBudgetName;
  limit: number;
  actual: number;
  spender: string;
  unpriced?: string;
}

/** Options for {@link JobBudget}. Every limit is optional; a budget with none only counts. */
export interface JobBudgetOptions {
  /** Prefill plus output tokens over every call of the job. @default unlimited */
  maxTokens?: number;
  /** USD over every call of the job; needs `prices`. @default unlimited */
  maxSpendUsd?: number;
  /** Milliseconds from the budget's creation; checked before each call and retry. @default unlimited */
  maxWallMs?: number;
  /** Retries (attempts after a first one) over the whole job. @default unlimited */
  maxRetries?: number;
  /** Prices by model id (`'*'` for any), as `runAgent`'s. */
  prices?: PriceTable;
  /**
   * Output tokens reserved for a call that sets no `maxOutputTokens`. The overspend bound holds
   * only if the provider stops there; a longer reply is charged in full when it returns.
   * @default 4096
   */
  assumedMaxOutputTokens?: number;
  /** @default systemClock */
  clock?: Clock;
}

/** What one call is about to cost at most. */
export interface ReserveRequest {
  /** Who spends: a path naming the sub-agent, stage, tool or retry. */
  spender: string;
  /** The model id the call goes to (its price is the reservation's). */
  model: string;
  /** The prefill the call sends (counted or estimated). */
  inputTokens: number;
  /** The call's output cap. @default the budget's `assumedMaxOutputTokens` */
  maxOutputTokens?: number | undefined;
}

/** A call's reserved maximum, held until it is settled, released or kept. */
export interface Reservation {
  readonly spender: string;
  readonly model: string;
  readonly tokens: number;
  readonly usd: number;
  /** The price the reservation was made at, or undefined without a USD limit. */
  readonly price: ModelPrice | undefined;
  /** True once settled, released or kept: a second settlement is ignored. */
  done: boolean;
}

/** A reservation, or why the job cannot make the call. */
export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; exceeded: JobBudgetExceeded };

/** How a call was settled, for traces and tests. */
export interface JobSettlement {
  tokens: number;
  usd: number;
  /** `actual`: the reported usage; `kept`: the whole reservation (usage missing or unreadable). */
  basis: 'actual' | 'kept';
  /** What the call cost beyond its reservation (a provider that ran past `maxOutputTokens`). */
  overTokens: number;
}

/** What a job has spent: committed by settled calls, and held by calls in flight. */
export interface JobSpend {
  tokens: number;
  usd: number;
  retries: number;
  calls: number;
  reservedTokens: number;
  reservedUsd: number;
  elapsedMs: number;
}

const jobBudgetExceededMarker = Symbol.for('reins.job-budget-exceeded');

/**
 * Thrown by a model wrapped with `budgetedModel` (and by `retryingModel` with a job budget)
 * when the job cannot afford the call. `runAgent` and `runPipeline` turn it into their labeled
 * `over_budget` outcome; a tool that lets it escape fails, and the job ends at its next call.
 */
export class JobBudgetExceededError extends ReinsError {
  override name = 'JobBudgetExceededError' as const;
  readonly exceeded: JobBudgetExceeded;
  readonly [jobBudgetExceededMarker] = true;

  constructor(exceeded: JobBudgetExceeded) {
    super(
      'job_budget_exceeded',
      `${exceeded.budget} ${exceeded.actual} > limit ${exceeded.limit} (spender ${exceeded.spender})`,
    );
    this.exceeded = exceeded;
  }
}

/** True for a {@link JobBudgetExceededError}, from this or another copy of reins. */
export function isJobBudgetExceeded(error: unknown): error is JobBudgetExceededError {
  try {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[jobBudgetExceededMarker] === true
    );
  } catch {
    // A Proxy whose trap throws is no refusal of ours; the caller handles it as the error it is.
    return false;
  }
}

const validCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/**
 * One budget for a whole job: every model call of every run, sub-agent, pipeline stage, tool and
 * retry that is handed it is charged here. Before each call the call's maximum is reserved (its
 * prefill plus `maxOutputTokens`, at its model's prices); the answer's usage replaces the
 * reservation (`settle`); a call that failed before the provider billed it gives it all back
 * (`release`); a call abandoned after it was sent (aborted, timed out) keeps it (`keep`): the
 * provider may have billed tokens reins never saw.
 *
 * Reservations are synchronous, so concurrent spenders in one process never overspend: a call
 * is made only if what is settled, what is held and its own maximum fit. Exhaustion is sticky: the
 * first refusal is recorded with its spender, and every later call of the job is refused with the
 * same record, so the job ends with one outcome naming who ran it out.
 *
 * @example
 * import { JobBudget, runAgent } from 'reins';
 * import { scriptedModel } from 'reins/testing';
 * const budget = new JobBudget({ maxTokens: 50_000, maxRetries: 5 });
 * const result = await runAgent({
 *   model: scriptedModel([{ text: 'done' }]),
 *   input: 'Summarize',
 *   maxOutputTokens: 512,
 *   jobBudget: budget,
 *   spender: 'agent:summary',
 * });
 * console.log(result.outcome.kind, budget.spent().tokens);
 */
export class JobBudget {
  readonly maxTokens: number | null;
  readonly maxSpendUsd: number | null;
  readonly maxWallMs: number | null;
  readonly maxRetries: number | null;
  readonly assumedMaxOutputTokens: number;
  readonly #prices: PriceTable | undefined;
  readonly #clock: Clock;
  readonly #startedAt: number;
  #tokens = 0;
  #usd = 0;
  #retries = 0;
  #calls = 0;
  #reservedTokens = 0;
  #reservedUsd = 0;
  #exceeded: JobBudgetExceeded | undefined;

  constructor(options: JobBudgetOptions = {}) {
    this.maxTokens = limit('maxTokens', options.maxTokens);
    this.maxSpendUsd = limit('maxSpendUsd', options.maxSpendUsd);
    this.maxWallMs = limit('maxWallMs', options.maxWallMs);
    this.maxRetries = options.maxRetries === undefined ? null : wholeLimit(options.maxRetries);
    const assumed = options.assumedMaxOutputTokens ?? 4096;
    if (!Number.isInteger(assumed) || assumed < 1)
      throw new ConfigurationError(
        'assumedMaxOutputTokens',
        `must be an integer ≥ 1, got ${String(assumed)}`,
      );
    this.assumedMaxOutputTokens = assumed;
    if (this.maxSpendUsd !== null && options.prices === undefined)
      throw new ConfigurationError('maxSpendUsd', 'needs a price table in `prices` to turn tokens into USD');
    this.#prices = options.prices;
    this.#clock = options.clock ?? systemClock;
    this.#startedAt = this.#clock.now();
  }

  /** The first refusal of the job, if it has run out. */
  get exceeded(): JobBudgetExceeded | undefined {
    return this.#exceeded;
  }

  /** Settled spend, what calls in flight hold, retries and elapsed time. */
  spent(): JobSpend {
    return {
      tokens: this.#tokens,
      usd: this.#usd,
      retries: this.#retries,
      calls: this.#calls,
      reservedTokens: this.#reservedTokens,
      reservedUsd: this.#reservedUsd,
      elapsedMs: this.#clock.now() - this.#startedAt,
    };
  }

  /**
   * Reserves the call's maximum, or refuses it (and every later call) when it would not fit.
   * Synchronous: two spenders cannot both take the last of the budget.
   */
  reserve(request: ReserveRequest): ReserveResult {
    const refused = this.#refusal(request.spender);
    if (refused) return refused;
    const output = request.maxOutputTokens ?? this.assumedMaxOutputTokens;
    const input = validCount(request.inputTokens) ? request.inputTokens : 0;
    const tokens = input + (validCount(output) ? output : this.assumedMaxOutputTokens);
    let price: ModelPrice | undefined;
    let usd = 0;
    if (this.maxSpendUsd !== null) {
      price = this.#prices ? resolvePrice(this.#prices, request.model)?.price : undefined;
      if (price === undefined)
        return this.#refuse({
          budget: 'job_spend_usd',
          limit: this.maxSpendUsd,
          actual: this.#usd + this.#reservedUsd,
          spender: request.spender,
          unpriced: request.model,
        });
      usd = maximumUsd(input, tokens - input, price);
    }
    if (this.maxTokens !== null && this.#tokens + this.#reservedTokens + tokens > this.maxTokens)
      return this.#refuse({
        budget: 'job_tokens',
        limit: this.maxTokens,
        actual: this.#tokens + this.#reservedTokens + tokens,
        spender: request.spender,
      });
    if (this.maxSpendUsd !== null && this.#usd + this.#reservedUsd + usd > this.maxSpendUsd)
      return this.#refuse({
        budget: 'job_spend_usd',
        limit: this.maxSpendUsd,
        actual: this.#usd + this.#reservedUsd + usd,
        spender: request.spender,
      });
    this.#reservedTokens += tokens;
    this.#reservedUsd += usd;
    return {
      ok: true,
      reservation: { spender: request.spender, model: request.model, tokens, usd, price, done: false },
    };
  }

  /**
   * The call answered: its reservation is replaced by what it used. Usage that is missing, or not
   * counts (negative, NaN, infinite), keeps the whole reservation: the provider billed something and
   * the figure cannot say what. Usage above the reservation is charged in full, and ends the job if
   * it passes a limit.
   */
  settle(reservation: Reservation, usage: Usage | undefined, reportedModel?: string): JobSettlement {
    if (reservation.done) return { tokens: 0, usd: 0, basis: 'actual', overTokens: 0 };
    reservation.done = true;
    this.#unhold(reservation);
    this.#calls += 1;
    const readable =
      usage !== undefined &&
      usage !== null &&
      validCount(usage.inputTokens) &&
      validCount(usage.outputTokens) &&
      validCount(usage.cacheReadTokens ?? 0) &&
      validCount(usage.cacheWriteTokens ?? 0);
    if (!readable) return this.#commit(reservation, reservation.tokens, reservation.usd, 'kept');
    const read: Usage = {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: usage.cacheReadTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    };
    const tokens = read.inputTokens + read.outputTokens + read.cacheReadTokens + read.cacheWriteTokens;
    const reported =
      reportedModel?.trim() && this.#prices ? resolvePrice(this.#prices, reportedModel) : undefined;
    const price = reported?.price ?? reservation.price;
    const usd = price ? costUsdOf(read, price) : 0;
    return this.#commit(reservation, tokens, usd, 'actual');
  }

  /** The call failed before the provider billed it (refused, rate limited, never sent): all refunded. */
  release(reservation: Reservation): void {
    if (reservation.done) return;
    reservation.done = true;
    this.#unhold(reservation);
  }

  /** The call was abandoned after it was sent (aborted, timed out): its whole reservation is charged. */
  keep(reservation: Reservation): JobSettlement {
    if (reservation.done) return { tokens: 0, usd: 0, basis: 'kept', overTokens: 0 };
    reservation.done = true;
    this.#unhold(reservation);
    this.#calls += 1;
    return this.#commit(reservation, reservation.tokens, reservation.usd, 'kept');
  }

  /** Takes one retry from the job's allowance, or refuses it (and ends the job). */
  retry(spender: string): { ok: true } | { ok: false; exceeded: JobBudgetExceeded } {
    const refused = this.#refusal(spender);
    if (refused) return refused;
    if (this.maxRetries !== null && this.#retries + 1 > this.maxRetries)
      return this.#refuse({
        budget: 'job_retries',
        limit: this.maxRetries,
        actual: this.#retries + 1,
        spender,
      });
    this.#retries += 1;
    return { ok: true };
  }

  #refusal(spender: string): { ok: false; exceeded: JobBudgetExceeded } | undefined {
    if (this.#exceeded) return { ok: false, exceeded: this.#exceeded };
    if (this.maxWallMs !== null) {
      const elapsed = this.#clock.now() - this.#startedAt;
      if (elapsed >= this.maxWallMs)
        return this.#refuse({ budget: 'job_wall_ms', limit: this.maxWallMs, actual: elapsed, spender });
    }
    return undefined;
  }

  #refuse(exceeded: JobBudgetExceeded): { ok: false; exceeded: JobBudgetExceeded } {
    this.#exceeded ??= exceeded;
    return { ok: false, exceeded: this.#exceeded };
  }

  #unhold(reservation: Reservation): void {
    this.#reservedTokens -= reservation.tokens;
    this.#reservedUsd -= reservation.usd;
    // Float sums of many reservations drift below zero by rounding; nothing is held then.
    if (this.#reservedTokens < 1e-9) this.#reservedTokens = 0;
    if (this.#reservedUsd < 1e-12) this.#reservedUsd = 0;
  }

  #commit(
    reservation: Reservation,
    tokens: number,
    usd: number,
    basis: JobSettlement['basis'],
  ): JobSettlement {
    this.#tokens += tokens;
    this.#usd += usd;
    const overTokens = Math.max(0, tokens - reservation.tokens);
    // A call that cost more than it reserved can pass a limit: the job ends, naming that spender.
    if (this.maxTokens !== null && this.#tokens > this.maxTokens)
      this.#refuse({
        budget: 'job_tokens',
        limit: this.maxTokens,
        actual: this.#tokens,
        spender: reservation.spender,
      });
    else if (this.maxSpendUsd !== null && this.#usd > this.maxSpendUsd)
      this.#refuse({
        budget: 'job_spend_usd',
        limit: this.maxSpendUsd,
        actual: this.#usd,
        spender: reservation.spender,
      });
    return { tokens, usd, basis, overTokens };
  }
}

/**
 * The most a call can cost: input at the dearest input rate (a cache write costs more than plain
 * input at Anthropic), output at the output rate.
 */
function maximumUsd(inputTokens: number, outputTokens: number, price: ModelPrice): number {
  const inputRate = Math.max(
    price.inputUsdPerMillionTokens,
    price.cacheWriteUsdPerMillionTokens ?? 0,
    price.cacheReadUsdPerMillionTokens ?? 0,
  );
  return (inputTokens * inputRate + outputTokens * price.outputUsdPerMillionTokens) / 1_000_000;
}

function limit(option: string, value: number | undefined): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0)
    throw new ConfigurationError(option, `must be a number > 0, got ${String(value)}`);
  return value;
}

function wholeLimit(value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new ConfigurationError('maxRetries', `must be an integer ≥ 0, got ${String(value)}`);
  return value;
}
