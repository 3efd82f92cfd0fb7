import type { Model } from '../../model/model.js';
import { type BudgetReading, traceVersion } from '../../trace/events.js';
import { guard } from '../boundary.js';
import type { LoopState } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { BudgetPhase, Outcome } from '../outcome.js';

/**
 * The price per million input tokens of the next call's prefill, at the price of the model about to
 * be called (`next`, when the caller knows it), else of the model that last answered or the run's
 * model. Undefined when no entry resolves: a spend budget then fails closed instead of counting it free.
 */
function inputPriceOfNext(state: LoopState, next: Model | undefined): number | undefined {
  const memo = state.prices;
  const resolved = memo
    ? next
      ? memo.resolve(next.name)
      : memo.resolve(state.lastModelId, state.setup.model.name)
    : undefined;
  return resolved?.price.inputUsdPerMillionTokens;
}

/**
 * Readings being gathered: the list the `budget-check` event carries, and what the spend readings
 * project for the next call (`unpriced` names its model when no price resolves). One value per
 * check, so the readings need no other object to be gathered.
 */
interface Gathered {
  readings: BudgetReading[];
  /** Readings written so far (the list is made at its full length). */
  count: number;
  projectedUsd: number;
  unpriced: string | undefined;
}

function read(into: Gathered, budget: BudgetReading['budget'], limit: number | null, actual: number): void {
  if (limit !== null) into.readings[into.count++] = { budget, limit, actual, ok: actual <= limit };
}

/** A spend reading: the projection added, or failed outright when the next call is unpriced. */
function readSpend(into: Gathered, budget: BudgetReading['budget'], limit: number, spent: number): void {
  if (into.unpriced === undefined) read(into, budget, limit, spent + into.projectedUsd);
  else into.readings[into.count++] = { budget, limit, actual: spent, ok: false };
}

/**
 * Every budget against the next call: context (its prefill), billed tokens, spend, the account's
 * shared ceiling (before calls only) and the wall clock. One `budget-check` event with every reading
 * (with `traceBudgetChecks: 'changes'`, only when a reading other than the wall clock changed since
 * the last one written, or one fails). `next` is the model the call will go to (after
 * `prepareStep`); spend is projected at its price, and a spend budget whose next call no price
 * resolves for fails (`over_budget` with `unpriced`). Synchronous unless the account's limiter or a
 * sink is not.
 */
export function checkBudgets(
  state: LoopState,
  phase: BudgetPhase,
  step: number,
  nextPrefill: number,
  next?: Model,
): Outcome | undefined | Promise<Outcome | undefined> {
  const { limits, accountSpend } = state.setup;
  // With a context policy the next window is sized by the policy before the call; after the results
  // the transcript's growth is not what the next call will send.
  const readsContext = phase !== 'after-results' || state.window === undefined;
  const accountPhase = accountSpend !== undefined && phase === 'before-call';
  const into: Gathered = {
    // Made at the length of the readings this check makes: a list grown by push from empty reserves
    // 17 slots, and the event keeps the list.
    readings: new Array<BudgetReading>(
      (readsContext && limits.maxContextTokens !== null ? 1 : 0) +
        (limits.maxBilledTokens !== null ? 1 : 0) +
        (limits.maxSpendUsd !== null ? 1 : 0) +
        (accountPhase ? 1 : 0) +
        (limits.maxWallMs !== null ? 1 : 0),
    ),
    count: 0,
    projectedUsd: 0,
    unpriced: undefined,
  };
  if (readsContext) read(into, 'context_tokens', limits.maxContextTokens, nextPrefill);
  read(into, 'billed_tokens', limits.maxBilledTokens, state.billedTokens + nextPrefill);
  if (limits.maxSpendUsd !== null || accountPhase) {
    const price = inputPriceOfNext(state, next);
    if (price === undefined) into.unpriced = (next ?? state.setup.model).name;
    else into.projectedUsd = (nextPrefill * price) / 1_000_000;
  }
  if (limits.maxSpendUsd !== null) readSpend(into, 'spend_usd', limits.maxSpendUsd, state.costUsd);
  if (!accountPhase) return concluded(state, phase, step, into);
  return readAccount(state, phase, step, into);
}

/** The account's shared ceiling: the limiter is the user's, so it may be asynchronous. */
async function readAccount(
  state: LoopState,
  phase: BudgetPhase,
  step: number,
  into: Gathered,
): Promise<Outcome | undefined> {
  const accountSpend = state.setup.accountSpend as NonNullable<LoopState['setup']['accountSpend']>;
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
  readSpend(into, 'account_spend_usd', accountSpend.limitUsd, spent.value);
  return concluded(state, phase, step, into);
}

/** The wall clock, the event, and the outcome of the first failed reading. */
function concluded(
  state: LoopState,
  phase: BudgetPhase,
  step: number,
  into: Gathered,
): Outcome | undefined | Promise<Outcome | undefined> {
  const { limits, clock } = state.setup;
  const { readings } = into;
  const now = clock.now();
  if (limits.maxWallMs !== null) {
    const elapsed = now - state.startedAt;
    readings[into.count++] = {
      budget: 'wall_ms',
      limit: limits.maxWallMs,
      actual: elapsed,
      ok: elapsed < limits.maxWallMs,
    };
  }
  // The list was made at the length this check reads; a mismatch would leave holes in the event.
  if (into.count !== readings.length) readings.length = into.count;
  if (readings.length === 0) return undefined;
  let failed: BudgetReading | undefined;
  for (let i = 0; i < readings.length; i++)
    if (!(readings[i] as BudgetReading).ok) {
      failed = readings[i];
      break;
    }
  const outcome = failed ? overBudget(failed, phase, into) : undefined;
  if (!state.trace.on || (failed === undefined && !changedSinceLast(state, readings))) return outcome;
  const written = state.trace.emit(
    {
      type: 'budget-check',
      step,
      phase,
      readings,
      ok: failed === undefined,
      v: traceVersion,
      runId: '',
      seq: 0,
      at: 0,
    },
    now,
  );
  return written ? written.then(() => outcome) : outcome;
}

function overBudget(failed: BudgetReading, phase: BudgetPhase, into: Gathered): Outcome {
  const outcome: Outcome = {
    kind: 'over_budget',
    budget: failed.budget,
    limit: failed.limit,
    actual: failed.actual,
    phase,
  };
  // Every spend reading of a check projects the same next call: unpriced, it failed them all.
  const spend = failed.budget === 'spend_usd' || failed.budget === 'account_spend_usd';
  if (spend && into.unpriced !== undefined) (outcome as { unpriced?: string }).unpriced = into.unpriced;
  return outcome;
}

/**
 * Whether this check is worth an event: always with `traceBudgetChecks: 'every'`; with `'changes'`,
 * when a reading other than the wall clock differs from the last check written (the check after a
 * step's results and the one before the next call usually read the same figures).
 */
function changedSinceLast(state: LoopState, readings: readonly BudgetReading[]): boolean {
  if (state.setup.traceBudgetChecks !== 'changes') return true;
  const last = state.lastBudgetReadings;
  state.lastBudgetReadings = readings;
  if (last === undefined || last.length !== readings.length) return true;
  for (let i = 0; i < readings.length; i++) {
    const a = readings[i] as BudgetReading;
    const b = last[i] as BudgetReading;
    if (a.budget === 'wall_ms' && b.budget === 'wall_ms') continue;
    if (a.budget !== b.budget || a.limit !== b.limit || a.actual !== b.actual || a.ok !== b.ok) {
      return true;
    }
  }
  // Unchanged: the last written check still stands for this one.
  state.lastBudgetReadings = last;
  return false;
}
