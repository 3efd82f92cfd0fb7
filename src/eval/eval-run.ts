import { errorInfo } from '../errors/error-info.js';
import { isConfigurationError } from '../errors/reins-error.js';
import type { Outcome } from '../loop/outcome.js';
import { runAgent } from '../loop/run-agent.js';
import type { RunResult } from '../loop/run-result.js';
import { seededRandom } from '../testing/seeded-random.js';
import type { Clock, RandomSource } from '../time/clock.js';
import { MemoryTraceSink } from '../trace/sink.js';
import { configFingerprint } from './config-fingerprint.js';
import type { AgentConfig, EvalCase, EvalReport, EvalSuite, TrialRecord, TrialView } from './eval-types.js';
import { classifyFailure } from './failure-class.js';
import { type ReadVerdict, readVerdict } from './read-verdict.js';
import type { EvalBudget, RunEvalOptions } from './run-eval.js';
import type { SpendMeter } from './spend-meter.js';
import { trajectoryProblems } from './trajectory-problems.js';
import { trialSeed } from './trial-seed.js';
import { trajectoryOf } from './trial-trajectory.js';

/** Why an eval stopped early, before the counts of what it left undone. */
export type StopReason = Omit<
  NonNullable<EvalReport['stopped']>,
  'skippedTrials' | 'cancelledTrials' | 'cancelledTokens' | 'cancelledUsd'
>;

/** A trial waiting to run; `slot` is its place in the report (case order, then trial). */
export interface QueuedTrial<World> {
  kase: EvalCase<World>;
  trial: number;
  slot: number;
}

/** A trial ready to run; `build` gives this or, when building failed, the trial's record. */
export interface BuiltTrial<World> {
  kind: 'built';
  kase: EvalCase<World>;
  trial: number;
  seed: number;
  world: World;
  config: AgentConfig;
  fingerprint: string;
}

export type TrialStep<World> = BuiltTrial<World> | { kind: 'record'; record: TrialRecord };

/**
 * One eval as its workers share it, and the stages below work on it. Module-level stages over one
 * state value, not closures made inside each `runEval` call: V8 compiles a closure's code for the
 * first instance it sees, so every eval after the first in a process (a fault matrix, a bench
 * round) had the harness compiled again.
 */
export interface EvalRun<World> {
  readonly suite: EvalSuite<World>;
  readonly options: RunEvalOptions;
  readonly seed: number;
  readonly clock: Clock;
  readonly budget: EvalBudget;
  /** A token or dollar budget: spend is metered from the traces. */
  readonly metered: boolean;
  /** Something can stop the eval (a budget or a signal): trials get the stop signal. */
  readonly stoppable: boolean;
  readonly meter: SpendMeter;
  readonly stop: AbortController;
  /**
   * Read on every trial: a flag, not `stop.signal.aborted` (a getter on a Node object whose map
   * differs from one eval to the next, so the workers' optimized code was thrown away each eval).
   */
  halted: boolean;
  reason: StopReason | undefined;
  fatal: { error: unknown } | undefined;
  readonly cancelled: { trials: number; tokens: number; usd: number };
  readonly evalKey: string;
  readonly queue: QueuedTrial<World>[];
  /** The next queue item to start. */
  next: number;
  done: number;
  readonly total: number;
  /** Finished trials by slot: the report needs no sort and no key per trial. */
  readonly records: (TrialRecord | undefined)[];
  /** Trials built while checking stored ones, run without building them again. */
  readonly prebuilt: Map<string, TrialStep<World>>;
}

/** Thrown inside a trial when the eval stops while one of its callbacks is still pending. */
export class TrialStopped extends Error {}

/** The key of a trial among stored and prebuilt ones. */
export const trialKey = (caseId: string, trial: number) => `${caseId}\u0000${trial}`;

/** Stops every trial: in flight ones see the signal, no new one starts. */
export function stopEval<World>(run: EvalRun<World>, why: unknown): void {
  run.halted = true;
  run.stop.abort(why);
}

/** Stops the eval for a named reason (a budget, the outer signal); the first reason stands. */
export function halt<World>(run: EvalRun<World>, why: StopReason): void {
  if (run.halted) return;
  run.reason = why;
  stopEval(run, new Error(`eval stopped: ${why.budget}`));
}

export function checkSpend<World>(run: EvalRun<World>): void {
  if (run.halted) return;
  const { budget } = run;
  const spent = run.meter.total();
  if (budget.tokens !== undefined && spent.tokens > budget.tokens)
    halt(run, { budget: 'tokens', limit: budget.tokens, actual: spent.tokens });
  else if (budget.usd !== undefined && spent.usd > budget.usd)
    halt(run, { budget: 'usd', limit: budget.usd, actual: spent.usd });
}

/** A callback's promise, abandoned (rejected with TrialStopped) when the eval stops first. */
function untilStopped<World, T>(run: EvalRun<World>, value: T | Promise<T>): T | Promise<T> {
  if (!run.stoppable || !(value instanceof Promise)) return value;
  if (run.halted) return Promise.reject(new TrialStopped());
  const signal = run.stop.signal;
  return new Promise<T>((resolve, reject) => {
    const onStop = () => reject(new TrialStopped());
    signal.addEventListener('abort', onStop, { once: true });
    value.then(
      (result) => {
        signal.removeEventListener('abort', onStop);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onStop);
        reject(error);
      },
    );
  });
}

function harnessFailure<World>(
  kase: EvalCase<World>,
  trial: number,
  trialSeedValue: number,
  why: string,
): TrialRecord {
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
}

function failedBuild<World>(
  kase: EvalCase<World>,
  trial: number,
  trialSeedValue: number,
  error: unknown,
): TrialStep<World> {
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
}

function withConfig<World>(
  run: EvalRun<World>,
  kase: EvalCase<World>,
  trial: number,
  trialSeedValue: number,
  world: World,
  config: AgentConfig,
): TrialStep<World> {
  if (typeof config !== 'object' || config === null || typeof config.model?.generate !== 'function')
    return {
      kind: 'record',
      record: harnessFailure(kase, trial, trialSeedValue, 'the agent built no model'),
    };
  const { options } = run;
  // Only a store needs it (to reuse a trial on resume): it serializes the tools' schemas.
  const fingerprint = options.store ? configFingerprint(config, kase.input, options.version) : '';
  return { kind: 'built', kase, trial, seed: trialSeedValue, world, config, fingerprint };
}

function withWorld<World>(
  run: EvalRun<World>,
  kase: EvalCase<World>,
  trial: number,
  trialSeedValue: number,
  random: RandomSource,
  world: World,
): TrialStep<World> | Promise<TrialStep<World>> {
  // One literal, not a spread of a base: on Node 20 a spread makes a new hidden class for every
  // object (it cost ~10 µs a trial here, and made the agent's reads of it megamorphic).
  const config = run.suite.agent({ caseId: kase.id, trial, seed: trialSeedValue, random, world, case: kase });
  return config instanceof Promise
    ? (untilStopped(run, config) as Promise<AgentConfig>).then((ready) =>
        withConfig(run, kase, trial, trialSeedValue, world, ready),
      )
    : withConfig(run, kase, trial, trialSeedValue, world, config);
}

/**
 * Builds a trial's world and agent; a throw is the trial's harness error (a ConfigurationError
 * stops the eval). Synchronous when `world` and `agent` are: an await per trial is not free, and
 * neither is a closure made per trial.
 */
export function build<World>(
  run: EvalRun<World>,
  kase: EvalCase<World>,
  trial: number,
): TrialStep<World> | Promise<TrialStep<World>> {
  const trialSeedValue = trialSeed(run.seed, kase.id, trial);
  const random = seededRandom(trialSeedValue);
  try {
    // Most cases have no world: the agent is built here, one call less on every trial's way.
    const world = kase.world
      ? kase.world({ caseId: kase.id, trial, seed: trialSeedValue, random })
      : undefined;
    if (world === undefined) {
      const config = run.suite.agent({
        caseId: kase.id,
        trial,
        seed: trialSeedValue,
        random,
        world: world as World,
        case: kase,
      });
      if (!(config instanceof Promise))
        return withConfig(run, kase, trial, trialSeedValue, world as World, config);
      return (untilStopped(run, config) as Promise<AgentConfig>)
        .then((ready) => withConfig(run, kase, trial, trialSeedValue, world as World, ready))
        .catch((error: unknown) => failedBuild(kase, trial, trialSeedValue, error));
    }
    const step =
      world instanceof Promise
        ? (untilStopped(run, world) as Promise<World>).then((ready) =>
            withWorld(run, kase, trial, trialSeedValue, random, ready),
          )
        : withWorld(run, kase, trial, trialSeedValue, random, world as World);
    return step instanceof Promise
      ? step.catch((error: unknown) => failedBuild(kase, trial, trialSeedValue, error))
      : step;
  } catch (error) {
    return failedBuild(kase, trial, trialSeedValue, error);
  }
}

function answerOf(outcome: Outcome): string | undefined {
  if (outcome.kind === 'answered') return outcome.text;
  if (outcome.kind === 'step_limit') return outcome.finalText;
  return undefined;
}

const defaultAccepted: readonly Outcome['kind'][] = ['answered'];

/** Runs a built trial, judges it and makes its record; undefined when the eval's stop cancelled it. */
async function runTrial<World>(
  run: EvalRun<World>,
  built: BuiltTrial<World>,
): Promise<TrialRecord | undefined> {
  const { kase, trial, world, config } = built;
  const { clock, cancelled } = run;
  const keep = new MemoryTraceSink();
  const events = keep.events;
  const started = clock.now();
  let result: RunResult;
  // The spend meter and the stop signal only when something can stop the eval: a listener per
  // run is not free.
  if (run.stoppable) {
    const owner = {};
    let settled: { tokens: number; usd: number };
    try {
      result = await runAgent({
        ...config,
        input: kase.input,
        trace: run.metered ? [keep, run.meter.sink(owner, () => checkSpend(run))] : keep,
        signal: run.stop.signal,
      });
    } finally {
      settled = run.meter.settle(owner);
    }
    // Cancelled by the eval's budget or signal: not a result of the agent, so not recorded.
    if (run.halted && result.outcome.kind === 'cancelled') {
      cancelled.trials++;
      cancelled.tokens += settled.tokens;
      cancelled.usd += settled.usd;
      return undefined;
    }
  } else result = await runAgent({ ...config, input: kase.input, trace: keep });
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
    verdict = readVerdict(returned instanceof Promise ? await untilStopped(run, returned) : returned);
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
  if (verdict.reason !== undefined) reason = reason === '' ? verdict.reason : `${reason}; ${verdict.reason}`;
  if (problems.length > 0)
    for (const problem of problems) reason = reason === '' ? problem : `${reason}; ${problem}`;
  if (reason !== '') record.reason = reason;
  return record;
}

/** Records a finished trial in its slot, saves it (when fresh) and counts it. */
export function finish<World>(
  run: EvalRun<World>,
  record: TrialRecord,
  slot: number,
  fresh: boolean,
): void | Promise<void> {
  run.records[slot] = record;
  // The spend so far matters only to a token or dollar budget.
  if (run.metered) run.meter.add(record);
  const { store } = run.options;
  // A harness error is the harness's, not the agent's: not stored, so a resume tries again.
  const saved =
    fresh && store && record.failureClass !== 'harness_error' ? store.save(run.evalKey, record) : undefined;
  return saved instanceof Promise ? saved.then(() => counted(run, record)) : counted(run, record);
}

function counted<World>(run: EvalRun<World>, record: TrialRecord): void {
  run.done++;
  const { onTrial } = run.options;
  if (onTrial)
    try {
      onTrial(record, run.done, run.total);
    } catch {
      // A progress callback must not stop the eval.
    }
  if (run.metered) checkSpend(run);
}

/** One of the eval's workers: takes the next trial from the queue until it is empty or the eval stops. */
export async function work<World>(run: EvalRun<World>): Promise<void> {
  const { queue, prebuilt } = run;
  while (!run.halted && run.next < queue.length) {
    const { kase, trial, slot } = queue[run.next++] as QueuedTrial<World>;
    try {
      let ready: TrialStep<World> | Promise<TrialStep<World>> | undefined;
      if (prebuilt.size > 0) {
        const key = trialKey(kase.id, trial);
        ready = prebuilt.get(key);
        prebuilt.delete(key);
      }
      ready ??= build(run, kase, trial);
      const step = ready instanceof Promise ? await ready : ready;
      if (step.kind === 'record') {
        const finished = finish(run, step.record, slot, true);
        if (finished) await finished;
        continue;
      }
      const record = await runTrial(run, step);
      if (record) {
        const finished = finish(run, record, slot, true);
        if (finished) await finished;
      }
    } catch (error) {
      if (error instanceof TrialStopped) {
        run.cancelled.trials++;
        continue;
      }
      // A programmer's error (or the store failing): stop every other trial before reporting it.
      run.fatal ??= { error };
      stopEval(run, error);
    }
  }
}
