import { errorInfo } from '../errors/error-info.js';
import { ConfigurationError, isConfigurationError } from '../errors/reins-error.js';
import type { RunOptions } from '../loop/options.js';
import type { Outcome } from '../loop/outcome.js';
import { runAgent } from '../loop/run-agent.js';
import type { RunResult } from '../loop/run-result.js';
import { seededRandom } from '../testing/seeded-random.js';
import { type Clock, systemClock, type TimerHandle } from '../time/clock.js';
import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { executedStatuses } from './call-statuses.js';
import { configFingerprint } from './config-fingerprint.js';
import { buildEvalReport } from './eval-report.js';
import type {
  AgentConfig,
  EvalCase,
  EvalReport,
  EvalSuite,
  JudgeSummary,
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
  /** Stops the eval like a spent budget (`stopped.budget` is then `signal`). */
  signal?: AbortSignal;
  /**
   * Part of every trial's configuration fingerprint: change it when you change what the
   * fingerprint cannot see (a model behind the same name, a tool's code), so a resume from a
   * results file re-runs the trials instead of reusing them.
   */
  version?: string;
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

  /** Forgets a trial in flight and gives back what it had spent. */
  settle(owner: object): Spend {
    const spend = this.live.get(owner) ?? { tokens: 0, usd: 0 };
    this.live.delete(owner);
    return spend;
  }

  add(record: TrialRecord): void {
    this.finished.tokens += record.billedTokens + (record.gradingTokens ?? 0);
    this.finished.usd += record.costUsd + (record.gradingCostUsd ?? 0);
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

interface ReadVerdict {
  pass: boolean;
  reason?: string;
  costUsd: number;
  billedTokens: number;
}

const spent = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

const passed: ReadVerdict = Object.freeze({ pass: true, costUsd: 0, billedTokens: 0 });
const failedVerdict: ReadVerdict = Object.freeze({ pass: false, costUsd: 0, billedTokens: 0 });

function readVerdict(verdict: Verdict): ReadVerdict {
  if (verdict === true) return passed;
  if (verdict === false) return failedVerdict;
  if (typeof verdict === 'object' && verdict !== null && typeof verdict.pass === 'boolean') {
    const read: ReadVerdict = {
      pass: verdict.pass === true,
      costUsd: spent(verdict.costUsd),
      billedTokens: spent(verdict.billedTokens),
    };
    if (typeof verdict.reason === 'string') read.reason = verdict.reason;
    return read;
  }
  return {
    pass: false,
    reason: `the predicate returned ${typeof verdict}, not a boolean or { pass }`,
    costUsd: 0,
    billedTokens: 0,
  };
}

/**
 * A trial's run options: the agent's configuration with the case's input and the trial's trace.
 * `Object.assign` onto a fresh object, not `{ ...config, input, trace }`: on Node 20 that spread
 * gives nearly every result a hidden class of its own (no transition from a shared one), so every
 * read of the options in the loop is megamorphic; these all share one.
 */
function runOptionsOf(
  config: AgentConfig,
  input: RunOptions['input'],
  trace: TraceSink | readonly TraceSink[],
): RunOptions {
  const options = Object.assign({}, config) as RunOptions;
  options.input = input;
  options.trace = trace;
  return options;
}

const noProblems: readonly string[] = Object.freeze([]);

/** The trajectory expectations a trial broke, each as a sentence. */
function trajectoryProblems(
  kase: EvalCase<unknown>,
  trace: readonly TraceEvent[],
  steps: number,
): readonly string[] {
  const expected = kase.trajectory;
  if (!expected) return noProblems;
  const problems: string[] = [];
  const succeeded = new Set<string>();
  const executed = new Set<string>();
  for (const event of trace) {
    if (event.type !== 'tool-result') continue;
    if (event.status === 'ok') succeeded.add(event.tool);
    if (executedStatuses.has(event.status)) executed.add(event.tool);
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

/** Thrown inside a trial when the eval stops while one of its callbacks is still pending. */
class TrialStopped extends Error {}

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
  const keyOf = (caseId: string, trial: number) => `${caseId}\u0000${trial}`;
  const stored = new Map<string, TrialRecord>();
  if (options.store)
    for (const record of await options.store.load(evalKey)) {
      if (!readableRecord(record, trials) || !ids.has(record.caseId)) continue;
      const key = keyOf(record.caseId, record.trial);
      if (!stored.has(key)) stored.set(key, record);
    }
  const meter = new SpendMeter();

  const stop = new AbortController();
  // Read on every trial: a flag, not `stop.signal.aborted` (a getter on a Node object whose map
  // differs from one eval to the next, so the workers' optimized code was thrown away each eval).
  let halted = false;
  const stopEval = (why: unknown) => {
    halted = true;
    stop.abort(why);
  };
  let reason:
    | Omit<
        NonNullable<EvalReport['stopped']>,
        'skippedTrials' | 'cancelledTrials' | 'cancelledTokens' | 'cancelledUsd'
      >
    | undefined;
  const cancelled = { trials: 0, tokens: 0, usd: 0 };
  let fatal: { error: unknown } | undefined;
  const budget = options.budget ?? {};
  const startedAt = clock.now();
  const halt = (why: NonNullable<typeof reason>) => {
    if (halted) return;
    reason = why;
    stopEval(new Error(`eval stopped: ${why.budget}`));
  };
  const checkSpend = () => {
    if (halted) return;
    const spent = meter.total();
    if (budget.tokens !== undefined && spent.tokens > budget.tokens)
      halt({ budget: 'tokens', limit: budget.tokens, actual: spent.tokens });
    else if (budget.usd !== undefined && spent.usd > budget.usd)
      halt({ budget: 'usd', limit: budget.usd, actual: spent.usd });
  };
  let wallTimer: TimerHandle | undefined;
  if (budget.wallMs !== undefined) {
    const wallMs = budget.wallMs;
    wallTimer = clock.setTimeout(
      () => halt({ budget: 'wall_ms', limit: wallMs, actual: clock.now() - startedAt }),
      wallMs,
    );
  }
  const onOuterAbort = () => halt({ budget: 'signal', limit: 0, actual: 0 });
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const metered = budget.tokens !== undefined || budget.usd !== undefined;
  const stoppable = metered || budget.wallMs !== undefined || options.signal !== undefined;

  /** A callback's promise, abandoned (rejected with TrialStopped) when the eval stops first. */
  const untilStopped = <T>(value: T | Promise<T>): T | Promise<T> => {
    if (!stoppable || !(value instanceof Promise)) return value;
    if (halted) return Promise.reject(new TrialStopped());
    return new Promise<T>((resolve, reject) => {
      const onStop = () => reject(new TrialStopped());
      stop.signal.addEventListener('abort', onStop, { once: true });
      value.then(
        (result) => {
          stop.signal.removeEventListener('abort', onStop);
          resolve(result);
        },
        (error: unknown) => {
          stop.signal.removeEventListener('abort', onStop);
          reject(error);
        },
      );
    });
  };

  /** A trial ready to run; `build` gives this or, when building failed, the trial's record. */
  type Built = {
    kind: 'built';
    kase: EvalCase<World>;
    trial: number;
    seed: number;
    world: World;
    config: AgentConfig;
    fingerprint: string;
  };
  type Step = Built | { kind: 'record'; record: TrialRecord };

  const harnessFailure = (
    kase: EvalCase<World>,
    trial: number,
    trialSeedValue: number,
    why: string,
  ): TrialRecord => {
    const outcome: Outcome = {
      kind: 'hard_error',
      source: 'internal',
      error: { name: 'EvalHarnessError', message: why },
    };
    return {
      caseId: kase.id,
      trial,
      seed: trialSeedValue,
      pass: false,
      reason: why,
      outcome,
      failureClass: 'harness_error',
      trajectory: trajectoryOf([], outcome, 0),
      billedTokens: 0,
      costUsd: 0,
      latencyMs: 0,
      runId: '',
      config: '',
      trace: [],
    };
  };

  /** Trials built while checking stored ones, run without building them again. */
  const prebuilt = new Map<string, Step>();

  const failedBuild = (
    kase: EvalCase<World>,
    trial: number,
    trialSeedValue: number,
    error: unknown,
  ): Step => {
    if (error instanceof TrialStopped || isConfigurationError(error)) throw error;
    return {
      kind: 'record',
      record: harnessFailure(
        kase,
        trial,
        trialSeedValue,
        `building the trial failed: ${errorInfo(error).message}`,
      ),
    };
  };
  const withConfig = (
    kase: EvalCase<World>,
    trial: number,
    trialSeedValue: number,
    world: World,
    config: AgentConfig,
  ): Step => {
    if (typeof config !== 'object' || config === null || typeof config.model?.generate !== 'function')
      return {
        kind: 'record',
        record: harnessFailure(kase, trial, trialSeedValue, 'the agent built no model'),
      };
    // Only a store needs it (to reuse a trial on resume): it serializes the tools' schemas.
    const fingerprint = options.store ? configFingerprint(config, kase.input, options.version) : '';
    return { kind: 'built', kase, trial, seed: trialSeedValue, world, config, fingerprint };
  };
  const withWorld = (
    kase: EvalCase<World>,
    trial: number,
    trialSeedValue: number,
    random: () => number,
    world: World,
  ): Step | Promise<Step> => {
    // One literal, not a spread of a base: on Node 20 a spread makes a new hidden class for every
    // object (it cost ~10 µs a trial here, and made the agent's reads of it megamorphic).
    const config = suite.agent({ caseId: kase.id, trial, seed: trialSeedValue, random, world, case: kase });
    return config instanceof Promise
      ? (untilStopped(config) as Promise<AgentConfig>).then((ready) =>
          withConfig(kase, trial, trialSeedValue, world, ready),
        )
      : withConfig(kase, trial, trialSeedValue, world, config);
  };

  /**
   * Builds a trial's world and agent; a throw is the trial's harness error (a ConfigurationError
   * stops the eval). Synchronous when `world` and `agent` are: an await per trial is not free, and
   * neither are closures made per trial (the stages above take what they need as arguments).
   */
  const build = (kase: EvalCase<World>, trial: number): Step | Promise<Step> => {
    const trialSeedValue = trialSeed(seed, kase.id, trial);
    const random = seededRandom(trialSeedValue);
    try {
      const world = kase.world
        ? kase.world({ caseId: kase.id, trial, seed: trialSeedValue, random })
        : undefined;
      const step =
        world instanceof Promise
          ? (untilStopped(world) as Promise<World>).then((ready) =>
              withWorld(kase, trial, trialSeedValue, random, ready),
            )
          : withWorld(kase, trial, trialSeedValue, random, world as World);
      return step instanceof Promise
        ? step.catch((error: unknown) => failedBuild(kase, trial, trialSeedValue, error))
        : step;
    } catch (error) {
      return failedBuild(kase, trial, trialSeedValue, error);
    }
  };

  const runTrial = async (built: Built): Promise<TrialRecord | undefined> => {
    const { kase, trial, world, config } = built;
    const events: TraceEvent[] = [];
    const keep: TraceSink = { write: (event) => void events.push(event) };
    const started = clock.now();
    let result: RunResult;
    // The spend meter and the stop signal only when something can stop the eval: a listener per
    // run is not free.
    if (stoppable) {
      const owner = {};
      let settled: { tokens: number; usd: number };
      try {
        const options = runOptionsOf(
          config,
          kase.input,
          metered ? [keep, meter.sink(owner, checkSpend)] : keep,
        );
        options.signal = stop.signal;
        result = await runAgent(options);
      } finally {
        settled = meter.settle(owner);
      }
      // Cancelled by the eval's budget or signal: not a result of the agent, so not recorded.
      if (halted && result.outcome.kind === 'cancelled') {
        cancelled.trials++;
        cancelled.tokens += settled.tokens;
        cancelled.usd += settled.usd;
        return undefined;
      }
    } else result = await runAgent(runOptionsOf(config, kase.input, keep));
    const latencyMs = clock.now() - started;
    const view: TrialView<World> = {
      caseId: kase.id,
      trial,
      result,
      outcome: result.outcome,
      answer: answerOf(result.outcome),
      trace: events,
      world,
    };
    let verdict: ReadVerdict;
    try {
      const returned = kase.expect(view);
      verdict = readVerdict(returned instanceof Promise ? await untilStopped(returned) : returned);
    } catch (error) {
      if (error instanceof TrialStopped) {
        cancelled.trials++;
        cancelled.tokens += result.billedTokens;
        cancelled.usd += result.costUsd;
        return undefined;
      }
      verdict = {
        pass: false,
        reason: `the predicate threw: ${errorInfo(error).message}`,
        costUsd: 0,
        billedTokens: 0,
      };
    }
    const accepted = kase.acceptOutcomes ?? defaultAccepted;
    const outcomeAccepted = accepted.includes(result.outcome.kind);
    const problems = trajectoryProblems(kase as EvalCase<unknown>, events, result.steps);
    const trajectory = trajectoryOf(events, result.outcome, result.steps);
    const pass = outcomeAccepted && verdict.pass && problems.length === 0;
    const record: TrialRecord = {
      caseId: kase.id,
      trial,
      seed: built.seed,
      pass,
      outcome: result.outcome,
      failureClass: pass
        ? null
        : classifyFailure({
            outcome: result.outcome,
            trajectory,
            predicatePassed: verdict.pass && outcomeAccepted,
            trace: events,
          }),
      trajectory,
      billedTokens: result.billedTokens,
      costUsd: result.costUsd,
      latencyMs,
      runId: result.runId,
      config: built.fingerprint,
      trace: events,
    };
    if (verdict.costUsd > 0) record.gradingCostUsd = verdict.costUsd;
    if (verdict.billedTokens > 0) record.gradingTokens = verdict.billedTokens;
    let reason = outcomeAccepted ? '' : `ended ${result.outcome.kind}, not ${accepted.join(' or ')}`;
    if (verdict.reason !== undefined)
      reason = reason === '' ? verdict.reason : `${reason}; ${verdict.reason}`;
    if (problems.length > 0)
      for (const problem of problems) reason = reason === '' ? problem : `${reason}; ${problem}`;
    if (reason !== '') record.reason = reason;
    return record;
  };

  // Trial-major order: every case's first trial before any case's second, so a budget that runs
  // out leaves the cases evenly covered. A trial's slot is its place in the report (case order,
  // then trial): records land there, so the report needs no sort and no key per trial.
  const queue: { kase: EvalCase<World>; trial: number; slot: number }[] = [];
  for (let trial = 0; trial < trials; trial++)
    for (let index = 0; index < cases.length; index++)
      queue.push({ kase: cases[index] as EvalCase<World>, trial, slot: index * trials + trial });
  const records: (TrialRecord | undefined)[] = new Array(cases.length * trials);
  const total = queue.length;
  let done = 0;
  let next = 0;
  const onTrial = options.onTrial;
  const finish = (record: TrialRecord, slot: number, fresh: boolean): void | Promise<void> => {
    records[slot] = record;
    // The spend so far matters only to a token or dollar budget.
    if (metered) meter.add(record);
    // A harness error is the harness's, not the agent's: not stored, so a resume tries again.
    const saved =
      fresh && options.store && record.failureClass !== 'harness_error'
        ? options.store.save(evalKey, record)
        : undefined;
    return saved instanceof Promise ? saved.then(() => counted(record)) : counted(record);
  };
  const counted = (record: TrialRecord) => {
    done++;
    if (onTrial)
      try {
        onTrial(record, done, total);
      } catch {
        // A progress callback must not stop the eval.
      }
    if (metered) checkSpend();
  };

  const worker = async () => {
    while (!halted && next < queue.length) {
      const { kase, trial, slot } = queue[next++] as (typeof queue)[number];
      try {
        let ready: Step | Promise<Step> | undefined;
        if (prebuilt.size > 0) {
          const key = keyOf(kase.id, trial);
          ready = prebuilt.get(key);
          prebuilt.delete(key);
        }
        ready ??= build(kase, trial);
        const step = ready instanceof Promise ? await ready : ready;
        if (step.kind === 'record') {
          const finished = finish(step.record, slot, true);
          if (finished) await finished;
          continue;
        }
        const record = await runTrial(step);
        if (record) {
          const finished = finish(record, slot, true);
          if (finished) await finished;
        }
      } catch (error) {
        if (error instanceof TrialStopped) {
          cancelled.trials++;
          continue;
        }
        // A programmer's error (or the store failing): stop every other trial before reporting it.
        fatal ??= { error };
        stopEval(error);
      }
    }
  };
  // Stored trials first, in one pass: their spend counts before any new trial may start.
  if (stored.size > 0) {
    const fresh: typeof queue = [];
    for (const item of queue) {
      const kept = stored.get(keyOf(item.kase.id, item.trial));
      if (!kept) {
        fresh.push(item);
        continue;
      }
      const step = await build(item.kase, item.trial);
      if (step.kind === 'built' && kept.config === step.fingerprint) finish(kept, item.slot, false);
      else {
        prebuilt.set(keyOf(item.kase.id, item.trial), step);
        fresh.push(item);
      }
    }
    queue.length = 0;
    queue.push(...fresh);
    stored.clear();
  }
  try {
    if (metered) checkSpend();
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
  } finally {
    if (wallTimer !== undefined) clock.clearTimeout(wallTimer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (fatal) throw fatal.error;

  const skippedTrials = queue.length - next;
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
  for (let slot = 0; slot < records.length; slot++) {
    const record = records[slot];
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

const defaultAccepted: readonly Outcome['kind'][] = ['answered'];
