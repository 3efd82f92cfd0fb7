import type { RunOptions } from '../loop/options.js';
import type { Outcome } from '../loop/outcome.js';
import type { RunResult } from '../loop/run-result.js';
import type { RandomSource } from '../time/clock.js';
import type { TraceEvent } from '../trace/events.js';

/**
 * What a trial runs with: everything `runAgent` takes except what the harness owns (the input comes
 * from the case, the trace and signal from the harness).
 */
export type AgentConfig = Omit<RunOptions, 'input' | 'trace' | 'signal'>;

/** What a case's builders and the suite's agent are told about the trial they serve. */
export interface TrialContext<World = unknown> {
  caseId: string;
  /** 0-based trial number within the case. */
  trial: number;
  /** This trial's seed: independent per (case, trial), fixed by the eval's seed. */
  seed: number;
  /** A seeded source for this trial alone. */
  random: RandomSource;
  /** The case's world for this trial (what `EvalCase.world` built), or undefined. */
  world: World;
}

/**
 * A predicate's answer: pass or not, and why. A predicate that calls a judge (or any model) reports
 * that spend in `costUsd` / `billedTokens`: it counts toward the eval's budget and shows in the
 * report as grading cost, apart from the agent's.
 */
export type Verdict = boolean | { pass: boolean; reason?: string; costUsd?: number; billedTokens?: number };

/** What a success predicate or a judge looks at. */
export interface TrialView<World = unknown> {
  caseId: string;
  trial: number;
  result: RunResult;
  outcome: Outcome;
  /** The final answer's text, when the run answered (or gave a final answer at the step limit). */
  answer: string | undefined;
  trace: readonly TraceEvent[];
  world: World;
}

/** Trajectory constraints checked on the trace, beside the outcome predicate. */
export interface TrajectoryExpectations {
  /** Tools that must have been called (and succeeded at least once). */
  mustCall?: readonly string[];
  /** Tools that must never have been called (proposed and executed). */
  mustNotCall?: readonly string[];
  /** Most model calls a passing trial may make. */
  maxSteps?: number;
}

/** One eval case: an input, its world, and a success predicate written before the run. */
export interface EvalCase<World = unknown> {
  id: string;
  input: RunOptions['input'];
  /** Builds this trial's world (canned data, a fake database): called once per trial. */
  world?: (context: Omit<TrialContext<World>, 'world'>) => World | Promise<World>;
  /** Success, as code. A trial passes when this and the trajectory expectations hold. */
  expect: (view: TrialView<World>) => Verdict | Promise<Verdict>;
  trajectory?: TrajectoryExpectations;
  /**
   * Outcomes a passing trial may end in. A run that hit its step cap, paused for a person or broke
   * fails whatever its predicate says, unless the case expects that outcome (a safety case that
   * expects `refused`, say).
   * @default ['answered']
   */
  acceptOutcomes?: readonly Outcome['kind'][];
  tags?: readonly string[];
}

/** A suite: cases and the agent under test. */
export interface EvalSuite<World = unknown> {
  name: string;
  cases: readonly EvalCase<World>[];
  /** Builds the agent for one trial: model (seeded from `context.random`), tools, limits. */
  agent: (context: TrialContext<World> & { case: EvalCase<World> }) => AgentConfig | Promise<AgentConfig>;
}

/**
 * Why a failed trial failed, from its outcome and its trace. `wrong_answer`: the run answered and the
 * predicate said no.
 */
export type FailureClass =
  | 'wrong_answer'
  | 'step_cap'
  | 'budget'
  | 'looped'
  | 'gave_up'
  | 'tool_failure'
  | 'validation_error'
  | 'hallucinated_tool'
  | 'refused'
  | 'needed_person'
  | 'model_error'
  | 'trajectory'
  | 'truncated'
  | 'cancelled'
  | 'harness_error';

/** Trajectory figures of one trial, from its trace. */
export interface TrialTrajectory {
  steps: number;
  toolCalls: number;
  /** Calls the dispatcher refused before executing (invalid JSON or input, unknown tool). */
  invalidToolCalls: number;
  /** Calls to a tool the run does not have. */
  unknownToolCalls: number;
  /** Calls whose (tool, canonical input) had already been made in this trial. */
  repeatedCalls: number;
  /** Steps whose every call failed, was refused or repeated an earlier one. */
  wastedSteps: number;
  /** The outcome kind. */
  terminal: Outcome['kind'];
}

/** One finished trial, as stored in a results file (serializable). */
export interface TrialRecord {
  caseId: string;
  trial: number;
  seed: number;
  pass: boolean;
  /** The predicate's or judge's reason, or why the harness failed it. */
  reason?: string;
  outcome: Outcome;
  failureClass: FailureClass | null;
  trajectory: TrialTrajectory;
  billedTokens: number;
  costUsd: number;
  /** Wall time of the run, from the eval's clock. */
  latencyMs: number;
  runId: string;
  /**
   * The configuration the trial ran with, as `configFingerprint` hashes it (empty when the eval had
   * no store): a resume reuses a trial only under the same one.
   */
  config: string;
  /** What grading the trial cost (a judge's calls), beside the agent's `costUsd`. */
  gradingCostUsd?: number;
  gradingTokens?: number;
  /** The trial's trace, kept for the report and for regression use. */
  trace: TraceEvent[];
}

/** A distribution summarized by its tail, never by its mean alone. */
export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** An interval [low, high] at 95 % unless said otherwise. */
export type Interval = [low: number, high: number];

/** Per-case figures. */
export interface CaseReport {
  id: string;
  /** Trials run. */
  n: number;
  passes: number;
  passRate: number;
  /** Unbiased pass@k (null when n < k). */
  passAtK: number | null;
  /** Unbiased pass^k (null when n < k). */
  passHatK: number | null;
  failureClasses: Partial<Record<FailureClass, number>>;
}

/** The eval's report, as `reins eval run --json` prints it. */
export interface EvalReport {
  /** Report schema version. */
  v: 1;
  suite: string;
  config: { trials: number; k: number; concurrency: number; seed: number };
  /**
   * Set when the eval stopped before running every trial: which shared budget ran out (`signal`:
   * the caller aborted), how many trials never ran, and what the trials cancelled in flight had
   * spent (not in the report's figures: they say nothing about the agent, and a resume runs them
   * again). Null when every trial ran, even if the last one crossed a budget.
   */
  stopped: {
    budget: 'tokens' | 'usd' | 'wall_ms' | 'signal';
    limit: number;
    actual: number;
    skippedTrials: number;
    cancelledTrials: number;
    cancelledTokens: number;
    cancelledUsd: number;
  } | null;
  cases: CaseReport[];
  summary: {
    k: number;
    trials: number;
    passRate: number;
    /** Wilson's interval over trials, as if every trial were independent. */
    passRateCi95: Interval;
    /**
     * The pass rate's interval by cases: a bootstrap that resamples cases, then each case's trials.
     * Trials of one case are correlated, so this is the honest one when cases differ; null with no trial.
     */
    passRateByCaseCi95: Interval | null;
    /** Mean over cases of unbiased pass@k, with a bootstrap interval over cases. */
    passAtK: number | null;
    passAtKCi95: Interval | null;
    passHatK: number | null;
    passHatKCi95: Interval | null;
    costP50: number;
    costP99: number;
    cost: Distribution;
    latencyMs: Distribution;
    steps: Distribution;
    billedTokens: Distribution;
    /** What grading cost (judges' calls reported by predicates), over all trials. */
    gradingCostUsd: number;
  };
  trajectory: {
    toolCallValidity: number;
    meanWastedSteps: number;
    repeatedCalls: number;
    terminal: Partial<Record<Outcome['kind'], number>>;
  };
  failureClasses: Partial<Record<FailureClass, number>>;
  judge?: JudgeSummary;
  trials: TrialRecord[];
}

/** What the report says about a judge used by the suite. */
export interface JudgeSummary {
  judgeId: string;
  model: string;
  rubricVersion: string;
  /** null when the judge has no calibration on record. */
  kappa: number | null;
  agreement: number | null;
  positionFlipRate: number | null;
  /** Set when the judge is uncalibrated or below its κ threshold: the report's first line. */
  warning: string | null;
}
