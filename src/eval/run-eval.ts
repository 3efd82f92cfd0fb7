import { ConfigurationError } from '../errors/reins-error.js';
import { type Clock, systemClock, type TimerHandle } from '../time/clock.js';
import { buildEvalReport } from './eval-report.js';
import {
  build,
  checkSpend,
  type EvalRun,
  finish,
  halt,
  type QueuedTrial,
  trialKey,
  work,
} from './eval-run.js';
import type { EvalCase, EvalReport, EvalSuite, JudgeSummary, TrialRecord } from './eval-types.js';
import type { EvalResultsStore } from './results-store.js';
import { SpendMeter } from './spend-meter.js';

/** A budget shared by every trial of an eval; when spent, the eval stops cleanly. */
export interface EvalBudget {
  /** Billed tokens over all trials. */
  tokens?: number;
  usd?: number;
  /** Wall time of the whole eval, on the eval's clock. */
  wallMs?: number;
}

export interface RunEvalOptions {
  /** Trials per case, each with its own seed. @default 10 */
  trials?: number;
  /** The k of pass@k and pass^k. @default Math.min(3, trials) */
  k?: number;
  /** Trials in flight at once. @default 4 */
  concurrency?: number;
  /** The eval's seed: every trial's seed is derived from it, the case id and the trial number. @default 1 */
  seed?: number;
  /**
   * Shared by every trial. Spend is read from each run's trace as it goes; when a limit is crossed
   * the trials in flight are cancelled and left unrecorded (a resume runs them again), no new trial
   * starts, and the report's `stopped` names the budget.
   */
  budget?: EvalBudget;
  /** Measures trial latency and the wall budget. @default systemClock */
  clock?: Clock;
  /** Keeps finished trials; with a durable store an interrupted eval resumes where it was. */
  store?: EvalResultsStore;
  /** Only these case ids. @default every case */
  cases?: readonly string[];
  /** Called after each trial is recorded (a throw here is ignored). */
  onTrial?: (record: TrialRecord, done: number, total: number) => void;
  /** The judge the suite's predicates use, as `judgeSummary` describes it: shown in the report. */
  judge?: JudgeSummary;
  /** Stops the eval like a spent budget (`stopped.budget` is then `signal`). */
  signal?: AbortSignal;
  /**
   * Part of every trial's configuration fingerprint: change it when you change what the
   * fingerprint cannot see (a model behind the same name, a tool's code), so a resume from a
   * results file re-runs the trials instead of reusing them.
   */
  version?: string;
}

function wholeNumber(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min)
    throw new ConfigurationError(name, `must be a whole number ≥ ${min}, got ${String(value)}`);
  return value;
}

function positiveLimit(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !(value > 0))
    throw new ConfigurationError(name, `must be a positive number, got ${String(value)}`);
}

/** The key finished trials are stored under: the suite's name and the eval's seed. */
export function evalKeyOf(suite: string, seed: number): string {
  return `${suite}#seed=${seed}`;
}

/** A stored record the harness can read back; anything else is skipped. */
function readableRecord(record: unknown, trials: number): record is TrialRecord {
  if (typeof record !== 'object' || record === null) return false;
  const { caseId, trial, pass, outcome, trajectory, costUsd, billedTokens } = record as Partial<TrialRecord>;
  return (
    typeof caseId === 'string' &&
    Number.isInteger(trial) &&
    (trial as number) >= 0 &&
    (trial as number) < trials &&
    typeof pass === 'boolean' &&
    typeof outcome?.kind === 'string' &&
    typeof trajectory === 'object' &&
    trajectory !== null &&
    typeof costUsd === 'number' &&
    typeof billedTokens === 'number'
  );
}

/**
 * Runs every case of a suite `trials` times, each trial with its own seed, at most `concurrency` at
 * once, and reports what the numbers mean: pass rate with a Wilson interval (and one by cases),
 * unbiased pass@k and pass^k per case and averaged, cost and latency as distributions, the
 * trajectory figures, and a failure class per failed trial. Every trial keeps its trace. With a
 * `store`, finished trials are saved as they finish, and a second call with the same suite and seed
 * reuses a stored trial only when the trial would run with the same configuration now (see
 * `configFingerprint`); the rest run.
 *
 * @example
 * const report = await runEval(suite, { trials: 10, k: 3, concurrency: 4 });
 * console.log(report.summary.passRate, report.summary.passHatK);
 */
export async function runEval<World>(
  suite: EvalSuite<World>,
  options: RunEvalOptions = {},
): Promise<EvalReport> {
  if (
    typeof suite !== 'object' ||
    suite === null ||
    !Array.isArray(suite.cases) ||
    typeof suite.agent !== 'function'
  )
    throw new ConfigurationError('suite', 'must be { name, cases, agent }');
  const trials = wholeNumber('trials', options.trials, 10, 1);
  const k = wholeNumber('k', options.k, Math.min(3, trials), 1);
  if (k > trials) throw new ConfigurationError('k', `must be at most trials (${trials}), got ${k}`);
  const concurrency = wholeNumber('concurrency', options.concurrency, 4, 1);
  const seed = wholeNumber('seed', options.seed, 1, 0);
  if (seed > 0xffffffff) throw new ConfigurationError('seed', `must be at most 2³²−1, got ${seed}`);
  positiveLimit('budget.tokens', options.budget?.tokens);
  positiveLimit('budget.usd', options.budget?.usd);
  positiveLimit('budget.wallMs', options.budget?.wallMs);
  if (options.version !== undefined && typeof options.version !== 'string')
    throw new ConfigurationError('version', 'must be a string');
  const clock = options.clock ?? systemClock;
  const ids = new Set<string>();
  for (const kase of suite.cases) {
    if (typeof kase?.id !== 'string' || kase.id === '')
      throw new ConfigurationError('suite.cases', 'every case needs an id');
    if (ids.has(kase.id)) throw new ConfigurationError('suite.cases', `two cases have the id "${kase.id}"`);
    if (typeof kase.expect !== 'function')
      throw new ConfigurationError(`suite.cases.${kase.id}.expect`, 'must be a function');
    ids.add(kase.id);
  }
  const wanted = options.cases ? new Set(options.cases) : undefined;
  if (wanted)
    for (const id of wanted) if (!ids.has(id)) throw new ConfigurationError('cases', `no case "${id}"`);
  const cases = suite.cases.filter((kase) => !wanted || wanted.has(kase.id));

  const evalKey = evalKeyOf(suite.name, seed);
  const stored = new Map<string, TrialRecord>();
  if (options.store)
    for (const record of await options.store.load(evalKey)) {
      if (!readableRecord(record, trials) || !ids.has(record.caseId)) continue;
      const key = trialKey(record.caseId, record.trial);
      if (!stored.has(key)) stored.set(key, record);
    }
  const budget = options.budget ?? {};
  const startedAt = clock.now();
  const metered = budget.tokens !== undefined || budget.usd !== undefined;
  // Trial-major order: every case's first trial before any case's second, so a budget that runs
  // out leaves the cases evenly covered. A trial's slot is its place in the report (case order,
  // then trial): records land there, so the report needs no sort and no key per trial.
  const queue: QueuedTrial<World>[] = [];
  for (let trial = 0; trial < trials; trial++)
    for (let index = 0; index < cases.length; index++)
      queue.push({ kase: cases[index] as EvalCase<World>, trial, slot: index * trials + trial });
  const run: EvalRun<World> = {
    suite,
    options,
    seed,
    clock,
    budget,
    metered,
    stoppable: metered || budget.wallMs !== undefined || options.signal !== undefined,
    meter: new SpendMeter(),
    stop: new AbortController(),
    halted: false,
    reason: undefined,
    fatal: undefined,
    cancelled: { trials: 0, tokens: 0, usd: 0 },
    evalKey,
    queue,
    next: 0,
    done: 0,
    total: queue.length,
    records: new Array(cases.length * trials),
    prebuilt: new Map(),
  };
  let wallTimer: TimerHandle | undefined;
  if (budget.wallMs !== undefined) {
    const wallMs = budget.wallMs;
    wallTimer = clock.setTimeout(
      () => halt(run, { budget: 'wall_ms', limit: wallMs, actual: clock.now() - startedAt }),
      wallMs,
    );
  }
  const onOuterAbort = () => halt(run, { budget: 'signal', limit: 0, actual: 0 });
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  // Stored trials first, in one pass: their spend counts before any new trial may start.
  if (stored.size > 0) {
    const fresh: QueuedTrial<World>[] = [];
    for (const item of queue) {
      const kept = stored.get(trialKey(item.kase.id, item.trial));
      if (!kept) {
        fresh.push(item);
        continue;
      }
      const step = await build(run, item.kase, item.trial);
      if (step.kind === 'built' && kept.config === step.fingerprint) finish(run, kept, item.slot, false);
      else {
        run.prebuilt.set(trialKey(item.kase.id, item.trial), step);
        fresh.push(item);
      }
    }
    queue.length = 0;
    queue.push(...fresh);
    stored.clear();
  }
  try {
    if (metered) checkSpend(run);
    await Promise.all(
      Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, () => work(run)),
    );
  } finally {
    if (wallTimer !== undefined) clock.clearTimeout(wallTimer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (run.fatal) throw run.fatal.error;

  const skippedTrials = queue.length - run.next;
  const { reason, cancelled } = run;
  const stopped: EvalReport['stopped'] =
    reason && (skippedTrials > 0 || cancelled.trials > 0)
      ? {
          ...reason,
          skippedTrials,
          cancelledTrials: cancelled.trials,
          cancelledTokens: cancelled.tokens,
          cancelledUsd: cancelled.usd,
        }
      : null;
  const sorted: TrialRecord[] = [];
  for (let slot = 0; slot < run.records.length; slot++) {
    const record = run.records[slot];
    if (record) sorted.push(record);
  }
  const input: Parameters<typeof buildEvalReport>[0] = {
    suite: suite.name,
    caseIds: cases.map((kase) => kase.id),
    config: { trials, k, concurrency, seed },
    records: sorted,
    stopped,
  };
  if (options.judge) input.judge = options.judge;
  return buildEvalReport(input);
}
