import { errorInfo } from '../errors/error-info.js';
import { ConfigurationError, isConfigurationError } from '../errors/reins-error.js';
import type { Outcome } from '../loop/outcome.js';
import { runAgent } from '../loop/run-agent.js';
import type { RunResult } from '../loop/run-result.js';
import { seededRandom } from '../testing/seeded-random.js';
import { type Clock, systemClock, type TimerHandle } from '../time/clock.js';
import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { buildEvalReport } from './eval-report.js';
import type {
  EvalCase,
  EvalReport,
  EvalSuite,
  JudgeSummary,
  TrialContext,
  TrialRecord,
  TrialView,
  Verdict,
} from './eval-types.js';
import { classifyFailure } from './failure-class.js';
import type { EvalResultsStore } from './results-store.js';
import { trialSeed } from './trial-seed.js';
import { trajectoryOf } from './trial-trajectory.js';

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
  /** Stops the eval like a spent budget, without naming one. */
  signal?: AbortSignal;
}

interface Spend {
  tokens: number;
  usd: number;
}

/** Spend of the trials in flight, read from their traces as they run. */
class SpendMeter {
  finished: Spend = { tokens: 0, usd: 0 };
  private readonly live = new Map<object, Spend>();

  sink(owner: object, onChange: () => void): TraceSink {
    const spend: Spend = { tokens: 0, usd: 0 };
    this.live.set(owner, spend);
    return {
      write: (event: TraceEvent) => {
        if (event.type === 'model-response' || event.type === 'step-end') {
          spend.tokens = event.billedTokens;
          spend.usd = event.costUsd;
          onChange();
        }
      },
    };
  }

  settle(owner: object, record: TrialRecord | undefined): void {
    this.live.delete(owner);
    if (record) {
      this.finished.tokens += record.billedTokens;
      this.finished.usd += record.costUsd;
    }
  }

  total(): Spend {
    let { tokens, usd } = this.finished;
    for (const spend of this.live.values()) {
      tokens += spend.tokens;
      usd += spend.usd;
    }
    return { tokens, usd };
  }
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

function answerOf(outcome: Outcome): string | undefined {
  if (outcome.kind === 'answered') return outcome.text;
  if (outcome.kind === 'step_limit') return outcome.finalText;
  return undefined;
}

function readVerdict(verdict: Verdict): { pass: boolean; reason?: string } {
  if (verdict === true || verdict === false) return { pass: verdict };
  if (typeof verdict === 'object' && verdict !== null && typeof verdict.pass === 'boolean') {
    const read: { pass: boolean; reason?: string } = { pass: verdict.pass === true };
    if (typeof verdict.reason === 'string') read.reason = verdict.reason;
    return read;
  }
  return { pass: false, reason: `the predicate returned ${typeof verdict}, not a boolean or { pass }` };
}

/** The trajectory expectations a trial broke, each as a sentence. */
function trajectoryProblems(kase: EvalCase<unknown>, trace: readonly TraceEvent[], steps: number): string[] {
  const expected = kase.trajectory;
  if (!expected) return [];
  const problems: string[] = [];
  const succeeded = new Set<string>();
  const executed = new Set<string>();
  for (const event of trace) {
    if (event.type !== 'tool-result') continue;
    if (event.status === 'ok') succeeded.add(event.tool);
    if (
      event.status === 'ok' ||
      event.status === 'error' ||
      event.status === 'timeout' ||
      event.status === 'fatal'
    )
      executed.add(event.tool);
  }
  for (const tool of expected.mustCall ?? [])
    if (!succeeded.has(tool)) problems.push(`${tool} was never called successfully`);
  for (const tool of expected.mustNotCall ?? []) if (executed.has(tool)) problems.push(`${tool} was called`);
  if (expected.maxSteps !== undefined && steps > expected.maxSteps)
    problems.push(`took ${steps} steps, more than ${expected.maxSteps}`);
  return problems;
}

/** The key finished trials are stored under: the suite's name and the eval's seed. */
export function evalKeyOf(suite: string, seed: number): string {
  return `${suite}#seed=${seed}`;
}

/**
 * Runs every case of a suite `trials` times, each trial with its own seed, at most `concurrency` at
 * once, and reports what the numbers mean: pass rate with a Wilson interval, unbiased pass@k and
 * pass^k per case and averaged, cost and latency as distributions, the trajectory figures, and a
 * failure class per failed trial. Every trial keeps its trace. With a `store`, finished trials are
 * saved as they finish and a second call with the same suite and seed runs only the missing ones.
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
  positiveLimit('budget.tokens', options.budget?.tokens);
  positiveLimit('budget.usd', options.budget?.usd);
  positiveLimit('budget.wallMs', options.budget?.wallMs);
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
  const records = new Map<string, TrialRecord>();
  const keyOf = (caseId: string, trial: number) => `${caseId}\u0000${trial}`;
  const meter = new SpendMeter();
  if (options.store) {
    for (const record of await options.store.load(evalKey)) {
      if (!ids.has(record.caseId) || (wanted && !wanted.has(record.caseId)) || record.trial >= trials)
        continue;
      if (records.has(keyOf(record.caseId, record.trial))) continue;
      records.set(keyOf(record.caseId, record.trial), record);
      meter.finished.tokens += record.billedTokens;
      meter.finished.usd += record.costUsd;
    }
  }

  // Trial-major order: every case's first trial before any case's second, so a budget that runs
  // out leaves the cases evenly covered.
  const queue: { kase: EvalCase<World>; trial: number }[] = [];
  for (let trial = 0; trial < trials; trial++)
    for (const kase of cases) if (!records.has(keyOf(kase.id, trial))) queue.push({ kase, trial });
  const total = cases.length * trials;

  const stop = new AbortController();
  let stopped: EvalReport['stopped'] = null;
  const budget = options.budget ?? {};
  const startedAt = clock.now();
  const checkSpend = () => {
    if (stop.signal.aborted) return;
    const spent = meter.total();
    if (budget.tokens !== undefined && spent.tokens > budget.tokens)
      stopped = { budget: 'tokens', limit: budget.tokens, actual: spent.tokens };
    else if (budget.usd !== undefined && spent.usd > budget.usd)
      stopped = { budget: 'usd', limit: budget.usd, actual: spent.usd };
    if (stopped) stop.abort(new Error(`eval budget spent: ${stopped.budget}`));
  };
  let wallTimer: TimerHandle | undefined;
  if (budget.wallMs !== undefined) {
    const wallMs = budget.wallMs;
    wallTimer = clock.setTimeout(() => {
      if (stop.signal.aborted) return;
      stopped = { budget: 'wall_ms', limit: wallMs, actual: clock.now() - startedAt };
      stop.abort(new Error('eval budget spent: wall_ms'));
    }, wallMs);
  }
  const onOuterAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) stop.abort(options.signal.reason);
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const metered = budget.tokens !== undefined || budget.usd !== undefined;
  const stoppable = metered || budget.wallMs !== undefined || options.signal !== undefined;
  let done = records.size;
  const runTrial = async (kase: EvalCase<World>, trial: number): Promise<TrialRecord | undefined> => {
    const trialSeedValue = trialSeed(seed, kase.id, trial);
    const base = { caseId: kase.id, trial, seed: trialSeedValue, random: seededRandom(trialSeedValue) };
    const owner = {};
    const events: TraceEvent[] = [];
    const harnessFailure = (reason: string): TrialRecord => ({
      caseId: kase.id,
      trial,
      seed: trialSeedValue,
      pass: false,
      reason,
      outcome: {
        kind: 'hard_error',
        source: 'internal',
        error: { name: 'EvalHarnessError', message: reason },
      },
      failureClass: 'harness_error',
      trajectory: trajectoryOf([], { kind: 'cancelled', reason }, 0),
      billedTokens: 0,
      costUsd: 0,
      latencyMs: 0,
      runId: '',
      trace: [],
    });
    let world: World;
    let context: TrialContext<World> & { case: EvalCase<World> };
    let config: Awaited<ReturnType<EvalSuite<World>['agent']>>;
    try {
      world = (kase.world ? await kase.world(base) : undefined) as World;
      context = { ...base, world, case: kase };
      config = await suite.agent(context);
    } catch (error) {
      if (isConfigurationError(error)) throw error;
      return harnessFailure(`building the trial failed: ${errorInfo(error).message}`);
    }
    const keep: TraceSink = { write: (event) => void events.push(event) };
    const started = clock.now();
    let result: RunResult;
    // The spend meter and the stop signal only when something can stop the eval: a listener per
    // run is not free.
    if (stoppable) {
      try {
        result = await runAgent({
          ...config,
          input: kase.input,
          trace: metered ? [keep, meter.sink(owner, checkSpend)] : keep,
          signal: stop.signal,
        });
      } finally {
        meter.settle(owner, undefined);
      }
    } else result = await runAgent({ ...config, input: kase.input, trace: keep });
    const latencyMs = clock.now() - started;
    // Cancelled by the eval's budget or signal: not a result of the agent, so not recorded.
    if (stop.signal.aborted && result.outcome.kind === 'cancelled') return undefined;
    const view: TrialView<World> = {
      caseId: kase.id,
      trial,
      result,
      outcome: result.outcome,
      answer: answerOf(result.outcome),
      trace: events,
      world,
    };
    let verdict: { pass: boolean; reason?: string };
    try {
      verdict = readVerdict(await kase.expect(view));
    } catch (error) {
      verdict = { pass: false, reason: `the predicate threw: ${errorInfo(error).message}` };
    }
    const problems = trajectoryProblems(kase as EvalCase<unknown>, events, result.steps);
    const trajectory = trajectoryOf(events, result.outcome, result.steps);
    const pass = verdict.pass && problems.length === 0;
    const record: TrialRecord = {
      caseId: kase.id,
      trial,
      seed: trialSeedValue,
      pass,
      outcome: result.outcome,
      failureClass: pass
        ? null
        : classifyFailure({
            outcome: result.outcome,
            trajectory,
            predicatePassed: verdict.pass,
            trace: events,
          }),
      trajectory,
      billedTokens: result.billedTokens,
      costUsd: result.costUsd,
      latencyMs,
      runId: result.runId,
      trace: events,
    };
    const reasons = [...(verdict.reason !== undefined ? [verdict.reason] : []), ...problems];
    if (reasons.length > 0) record.reason = reasons.join('; ');
    return record;
  };

  const worker = async () => {
    for (;;) {
      if (stop.signal.aborted) return;
      const next = queue.shift();
      if (!next) return;
      const record = await runTrial(next.kase, next.trial);
      if (!record) return;
      meter.finished.tokens += record.billedTokens;
      meter.finished.usd += record.costUsd;
      records.set(keyOf(record.caseId, record.trial), record);
      if (options.store) await options.store.save(evalKey, record);
      done++;
      try {
        options.onTrial?.(record, done, total);
      } catch {
        // A progress callback must not stop the eval.
      }
      checkSpend();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
  } finally {
    if (wallTimer !== undefined) clock.clearTimeout(wallTimer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }

  const order = new Map(cases.map((kase, index) => [kase.id, index]));
  const sorted = [...records.values()].sort(
    (a, b) => (order.get(a.caseId) ?? 0) - (order.get(b.caseId) ?? 0) || a.trial - b.trial,
  );
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
