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

/** A predicate's answer: pass or not, and why. */
export type Verdict = boolean | { pass: boolean; reason?: string };

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
  /** When the eval stopped before running every trial: which shared budget ran out. */
  stopped: { budget: 'tokens' | 'usd' | 'wall_ms'; limit: number; actual: number } | null;
  cases: CaseReport[];
  summary: {
    k: number;
    trials: number;
    passRate: number;
    passRateCi95: Interval;
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
