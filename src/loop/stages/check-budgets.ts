import type { Model } from '../../model/model.js';
import { type BudgetReading, traceVersion } from '../../trace/events.js';
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
  const memo = state.prices;
  const resolved = memo
    ? next
      ? memo.resolve(next.name)
      : memo.resolve(state.lastModelId, state.setup.model.name)
    : undefined;
  if (!resolved) return { usd: 0, unpriced: (next ?? state.setup.model).name };
  return { usd: (nextPrefill * resolved.price.inputUsdPerMillionTokens) / 1_000_000, unpriced: undefined };
}

/** How many budgets a check reads at most: context, billed tokens, spend, account spend, wall clock. */
const budgetCount = 5;

/**
 * Readings being gathered, and the budget of each spend reading that failed unpriced. `readings`
 * is made with room for every budget there is and cut to `count` at the end: a `budget-check`
 * event keeps it for as long as the trace is held, and an array grown by `push` from empty keeps a
 * backing store of 17 slots.
 */
interface Gathered {
  readings: BudgetReading[];
  count: number;
  unpriced: { budget: BudgetReading['budget']; model: string }[] | undefined;
}

function read(into: Gathered, budget: BudgetReading['budget'], limit: number | null, actual: number): void {
  if (limit !== null) into.readings[into.count++] = { budget, limit, actual, ok: actual <= limit };
}

/** A spend reading: the projection added, or failed outright when the next call is unpriced. */
function readSpend(
  into: Gathered,
  budget: BudgetReading['budget'],
  limit: number,
  spent: number,
  next: Projection,
): void {
  if (next.unpriced === undefined) {
    read(into, budget, limit, spent + next.usd);
    return;
  }
  into.readings[into.count++] = { budget, limit, actual: spent, ok: false };
  into.unpriced ??= [];
  into.unpriced.push({ budget, model: next.unpriced });
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
  const into: Gathered = { readings: new Array<BudgetReading>(budgetCount), count: 0, unpriced: undefined };
  // With a context policy the next window is sized by the policy before the call; after the results
  // the transcript's growth is not what the next call will send.
  if (phase !== 'after-results' || state.window === undefined)
    read(into, 'context_tokens', limits.maxContextTokens, nextPrefill);
  read(into, 'billed_tokens', limits.maxBilledTokens, state.billedTokens + nextPrefill);
  const accountPhase = accountSpend !== undefined && phase === 'before-call';
  const projected =
    limits.maxSpendUsd !== null || accountPhase ? projection(state, nextPrefill, next) : undefined;
  if (limits.maxSpendUsd !== null && projected)
    readSpend(into, 'spend_usd', limits.maxSpendUsd, state.costUsd, projected);
  if (!accountPhase || !projected) return concluded(state, phase, step, into);
  return readAccount(state, phase, step, into, projected);
}

/** The account's shared ceiling: the limiter is the user's, so it may be asynchronous. */
async function readAccount(
  state: LoopState,
  phase: BudgetPhase,
  step: number,
  into: Gathered,
  projected: Projection,
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
  readSpend(into, 'account_spend_usd', accountSpend.limitUsd, spent.value, projected);
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
  if (into.count === 0) return undefined;
  readings.length = into.count;
  let failed: BudgetReading | undefined;
  for (const reading of readings)
    if (!reading.ok) {
      failed = reading;
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
  const model = into.unpriced?.find((entry) => entry.budget === failed.budget)?.model;
  if (model !== undefined) (outcome as { unpriced?: string }).unpriced = model;
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
