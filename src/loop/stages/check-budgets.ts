import { priceFor } from '../../controls/price.js';
import type { BudgetReading } from '../../trace/events.js';
import { guard } from '../boundary.js';
import type { LoopState } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { BudgetPhase, Outcome } from '../outcome.js';

/** The USD the next call's prefill would cost at the price of the model last answering. */
function projectedUsd(state: LoopState, nextPrefill: number): number {
  const { prices, model } = state.setup;
  const price = prices ? priceFor(prices, state.lastModelId ?? model.name) : undefined;
  return price ? (nextPrefill * price.inputUsdPerMillionTokens) / 1_000_000 : 0;
}

/**
 * Every budget against the next call: context (its prefill), billed tokens, spend, the account's
 * shared ceiling (before calls only) and the wall clock. One `budget-check` event with every reading.
 */
export async function checkBudgets(
  state: LoopState,
  phase: BudgetPhase,
  step: number,
  nextPrefill: number,
): Promise<Outcome | undefined> {
  const { limits, accountSpend, clock } = state.setup;
  const readings: BudgetReading[] = [];
  const read = (budget: BudgetReading['budget'], limit: number | null, actual: number) => {
    if (limit !== null) readings.push({ budget, limit, actual, ok: actual <= limit });
  };
  read('context_tokens', limits.maxContextTokens, nextPrefill);
  read('billed_tokens', limits.maxBilledTokens, state.billedTokens + nextPrefill);
  if (limits.maxSpendUsd !== null)
    read('spend_usd', limits.maxSpendUsd, state.costUsd + projectedUsd(state, nextPrefill));
  if (accountSpend && phase === 'before-call') {
    const spent = await guard(
      'limiter',
      () => accountSpend.limiter.spent(accountSpend.accountId),
      state.run.signal,
    );
    if (!spent.ok) throw LoopStop.from(spent, 'before-call');
    read('account_spend_usd', accountSpend.limitUsd, spent.value + projectedUsd(state, nextPrefill));
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
  return { kind: 'over_budget', budget: failed.budget, limit: failed.limit, actual: failed.actual, phase };
}
