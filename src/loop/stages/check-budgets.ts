import { resolvePrice } from '../../controls/price.js';
import type { Model } from '../../model/model.js';
import type { BudgetReading } from '../../trace/events.js';
import { guard } from '../boundary.js';
import type { LoopState } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { BudgetPhase, Outcome } from '../outcome.js';

/** The next call's prefill in USD, or the model id no price resolves for. */
type Projection = { usd: number; unpriced: undefined } | { usd: 0; unpriced: string };

/**
 * The USD the next call's prefill would cost, at the price of the model about to be called
 * (`next`, when the caller knows it), else of the model that last answered or the run's model.
 * Unpriced when no entry resolves: a spend budget then fails closed instead of counting it free.
 */
function projection(state: LoopState, nextPrefill: number, next: Model | undefined): Projection {
  const { prices, model } = state.setup;
  const ids = next ? [next.name] : [state.lastModelId, model.name];
  const resolved = prices ? resolvePrice(prices, ...ids) : undefined;
  if (!resolved) return { usd: 0, unpriced: (next ?? model).name };
  return { usd: (nextPrefill * resolved.price.inputUsdPerMillionTokens) / 1_000_000, unpriced: undefined };
}

/**
 * Every budget against the next call: context (its prefill), billed tokens, spend, the account's
 * shared ceiling (before calls only) and the wall clock. One `budget-check` event with every reading.
 * `next` is the model the call will go to (after `prepareStep`); spend is projected at its price,
 * and a spend budget whose next call no price resolves for fails (`over_budget` with `unpriced`).
 */
export async function checkBudgets(
  state: LoopState,
  phase: BudgetPhase,
  step: number,
  nextPrefill: number,
  next?: Model,
): Promise<Outcome | undefined> {
  const { limits, accountSpend, clock } = state.setup;
  const readings: BudgetReading[] = [];
  const unpriced = new Map<BudgetReading['budget'], string>();
  const read = (budget: BudgetReading['budget'], limit: number | null, actual: number) => {
    if (limit !== null) readings.push({ budget, limit, actual, ok: actual <= limit });
  };
  /** A spend reading: the projection added, or failed outright when the next call is unpriced. */
  const readSpend = (budget: BudgetReading['budget'], limit: number, spent: number, next: Projection) => {
    if (next.unpriced === undefined) return read(budget, limit, spent + next.usd);
    readings.push({ budget, limit, actual: spent, ok: false });
    unpriced.set(budget, next.unpriced);
  };
  read('context_tokens', limits.maxContextTokens, nextPrefill);
  read('billed_tokens', limits.maxBilledTokens, state.billedTokens + nextPrefill);
  const spendBudget = limits.maxSpendUsd !== null || (accountSpend !== undefined && phase === 'before-call');
  const projected = spendBudget ? projection(state, nextPrefill, next) : undefined;
  if (limits.maxSpendUsd !== null && projected)
    readSpend('spend_usd', limits.maxSpendUsd, state.costUsd, projected);
  if (accountSpend && phase === 'before-call' && projected) {
    const spent = await guard(
      'limiter',
      () => accountSpend.limiter.spent(accountSpend.accountId),
      state.run.signal,
    );
    if (!spent.ok) throw LoopStop.from(spent, 'before-call');
    if (typeof spent.value !== 'number' || !Number.isFinite(spent.value) || spent.value < 0)
      throw new LoopStop(
        {
          kind: 'hard_error',
          source: 'limiter',
          error: {
            name: 'InvalidSpend',
            message: `accountSpend.limiter.spent() returned ${typeof spent.value === 'number' ? String(spent.value) : typeof spent.value}, not a number of USD ≥ 0`,
          },
        },
        'before-call',
      );
    readSpend('account_spend_usd', accountSpend.limitUsd, spent.value, projected);
  }
  const now = clock.now();
  if (limits.maxWallMs !== null) {
    const elapsed = now - state.startedAt;
    readings.push({
      budget: 'wall_ms',
      limit: limits.maxWallMs,
      actual: elapsed,
      ok: elapsed < limits.maxWallMs,
    });
  }
  if (readings.length === 0) return undefined;
  const failed = readings.find((reading) => !reading.ok);
  await state.trace.emit({ type: 'budget-check', step, phase, readings, ok: failed === undefined }, now);
  if (!failed) return undefined;
  const outcome: Outcome = {
    kind: 'over_budget',
    budget: failed.budget,
    limit: failed.limit,
    actual: failed.actual,
    phase,
  };
  const model = unpriced.get(failed.budget);
  return model === undefined ? outcome : { ...outcome, unpriced: model };
}
