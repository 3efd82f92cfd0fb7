import { ConfigurationError } from '../errors/reins-error.js';
import { seededRandom } from '../testing/seeded-random.js';
import type { Clock } from '../time/clock.js';
import type { EvalReport, EvalSuite, FailureClass, Interval } from './eval-types.js';
import { type FaultFiring, type ToolFault, toolFaults } from './fault-injection.js';
import { faultLedgerKey, faultSuite } from './fault-suite.js';
import { type RunEvalOptions, runEval } from './run-eval.js';
import { trialSeed } from './trial-seed.js';
import { wilsonInterval } from './wilson-interval.js';

/** Options for {@link runFaultMatrix}. */
export interface FaultMatrixOptions extends FaultFiring {
  /** Tools to break, one at a time. @default every tool the agent offers (its `allowedTools` when set) */
  tools?: readonly string[];
  /** @default every fault in `toolFaults` */
  faults?: readonly ToolFault[];
  /** What `slow` waits on. @default the agent config's `clock`, else the system clock */
  clock?: Clock;
  /**
   * How the baseline and every cell are run. A `budget` applies to each run on its own. A `store`
   * serves the baseline only: a cell's trials must run in this process, since which trials a fault
   * reached is known only as they run.
   * @default {}
   */
  run?: RunEvalOptions;
  /**
   * The unfaulted eval, when the caller has just run it with the same `run` options: used as the
   * baseline instead of running the suite again. Refused when its seed or trials differ.
   */
  baseline?: EvalReport;
  /** Called after the baseline (cell undefined) and after each cell. */
  onCell?: (cell: FaultMatrixCell | undefined, done: number, total: number) => void;
}

/** One tool broken one way: how often the agent still passed, and what it cost. */
export interface FaultMatrixCell {
  tool: string;
  fault: ToolFault;
  /** Trials recorded (fewer than asked when the cell's budget stopped it). */
  trials: number;
  passes: number;
  /** Faults fired over the cell's trials run in this process. 0: the agent never met the fault. */
  injected: number;
  /** Trials in which the fault fired at least once. */
  faultedTrials: number;
  /** Passing trials among the faulted ones. */
  recoveries: number;
  /** recoveries / faultedTrials; null when the fault never fired (nothing was tested). */
  recoveryRate: number | null;
  recoveryCi95: Interval | null;
  meanCostUsd: number;
  /**
   * The same trials (same case and seed) in the unfaulted baseline: how often they passed there.
   * Recovery is read against this, not against the whole baseline, since the trials a fault reaches
   * (those that call the tool) are not a random sample. Null when the fault never fired.
   */
  baselinePassRateOnFaulted: number | null;
  /**
   * Mean cost of the faulted trials over the mean cost of the same trials unfaulted: what recovering
   * (or failing) cost. Null when the fault never fired or those trials cost nothing unfaulted.
   */
  costMultiplier: number | null;
  /**
   * Mean latency of the faulted trials over the same trials unfaulted (what a `slow` or `timeout`
   * fault costs in time); null when the fault never fired or those trials took no time.
   */
  latencyMultiplier: number | null;
  failureClasses: Partial<Record<FailureClass, number>>;
  stopped: EvalReport['stopped'];
}

/** The fault matrix: the unfaulted baseline and one cell per (tool, fault). */
export interface FaultMatrixReport {
  v: 1;
  suite: string;
  /** When the faults fired. */
  firing: { rate: number } | { atCall: number };
  baseline: { trials: number; passes: number; passRate: number; passRateCi95: Interval; meanCostUsd: number };
  cells: FaultMatrixCell[];
}

/**
 * Runs the suite once as is and once per (tool, fault) with that one tool broken, through
 * `runEval`, and reports per cell how often the agent recovered (passed in trials where the fault
 * fired), with a Wilson interval, beside how often the same trials passed unfaulted, and what the
 * fault cost: the faulted trials' mean cost over the same trials' unfaulted cost. A fault that never
 * fired in a cell (the agent did not call that tool, or a low rate drew no hit) shows `injected: 0`
 * and a null recovery rate: untested, not recovered.
 *
 * @example
 * const matrix = await runFaultMatrix(suite, { faults: ['http_429', 'timeout'], run: { trials: 20 } });
 * for (const cell of matrix.cells) console.log(cell.tool, cell.fault, cell.recoveryRate, cell.costMultiplier);
 */
export async function runFaultMatrix<World>(
  suite: EvalSuite<World>,
  options: FaultMatrixOptions = {},
): Promise<FaultMatrixReport> {
  const run = options.run ?? {};
  const faults = options.faults ?? toolFaults;
  for (const fault of faults)
    if (!(toolFaults as readonly string[]).includes(fault))
      throw new ConfigurationError('faults', `"${fault}" is not one of ${toolFaults.join(', ')}`);
  const tools = options.tools ?? (await offeredTools(suite, run));
  const total = 1 + tools.length * faults.length;
  const given = options.baseline;
  if (
    given &&
    (given.suite !== suite.name ||
      given.config.seed !== (run.seed ?? 1) ||
      given.config.trials !== (run.trials ?? 10))
  )
    throw new ConfigurationError('baseline', 'must be this suite run with the same seed and trials as `run`');
  const baseline = given ?? (await runEval(suite, run));
  options.onCell?.(undefined, 1, total);
  const baselineCost = baseline.summary.cost.mean;
  const baselineTrials = new Map(
    baseline.trials.map((trial) => [faultLedgerKey(trial.caseId, trial.trial), trial]),
  );
  const firing: FaultFiring = {};
  if (options.rate !== undefined) firing.rate = options.rate;
  if (options.atCall !== undefined) firing.atCall = options.atCall;
  if (options.retryAfterSeconds !== undefined) firing.retryAfterSeconds = options.retryAfterSeconds;
  if (options.delayMs !== undefined) firing.delayMs = options.delayMs;
  const cells: FaultMatrixCell[] = [];
  for (const tool of tools) {
    for (const fault of faults) {
      const faulted = faultSuite(suite, {
        ...firing,
        tool,
        fault,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      const { store: _store, ...cellRun } = run;
      const report = await runEval(faulted, cellRun);
      const faultedKeys = faulted.faults.faultedTrials;
      const recoveries = report.trials.filter(
        (trial) => trial.pass && faultedKeys.has(faultLedgerKey(trial.caseId, trial.trial)),
      ).length;
      const faultedTrials = report.trials.filter((trial) =>
        faultedKeys.has(faultLedgerKey(trial.caseId, trial.trial)),
      ).length;
      const meanCostUsd = report.summary.cost.mean;
      const onFaulted = report.trials.filter((trial) =>
        faultedKeys.has(faultLedgerKey(trial.caseId, trial.trial)),
      );
      const unfaulted = onFaulted.flatMap((trial) => {
        const same = baselineTrials.get(faultLedgerKey(trial.caseId, trial.trial));
        return same ? [same] : [];
      });
      const faultedCost = onFaulted.reduce((sum, trial) => sum + trial.costUsd, 0);
      const unfaultedCost = unfaulted.reduce((sum, trial) => sum + trial.costUsd, 0);
      const faultedMs = onFaulted.reduce((sum, trial) => sum + trial.latencyMs, 0);
      const unfaultedMs = unfaulted.reduce((sum, trial) => sum + trial.latencyMs, 0);
      const cell: FaultMatrixCell = {
        tool,
        fault,
        trials: report.summary.trials,
        passes: report.trials.filter((trial) => trial.pass).length,
        injected: faulted.faults.injected,
        faultedTrials,
        recoveries,
        recoveryRate: faultedTrials === 0 ? null : recoveries / faultedTrials,
        recoveryCi95: faultedTrials === 0 ? null : wilsonInterval(recoveries, faultedTrials),
        meanCostUsd,
        baselinePassRateOnFaulted:
          unfaulted.length === 0 ? null : unfaulted.filter((trial) => trial.pass).length / unfaulted.length,
        costMultiplier:
          unfaulted.length === 0 || unfaultedCost <= 0
            ? null
            : faultedCost / onFaulted.length / (unfaultedCost / unfaulted.length),
        latencyMultiplier:
          unfaulted.length === 0 || unfaultedMs <= 0
            ? null
            : faultedMs / onFaulted.length / (unfaultedMs / unfaulted.length),
        failureClasses: report.failureClasses,
        stopped: report.stopped,
      };
      cells.push(cell);
      options.onCell?.(cell, cells.length + 1, total);
    }
  }
  const passes = baseline.trials.filter((trial) => trial.pass).length;
  return {
    v: 1,
    suite: suite.name,
    firing: options.rate !== undefined ? { rate: options.rate } : { atCall: options.atCall ?? 1 },
    baseline: {
      trials: baseline.summary.trials,
      passes,
      passRate: baseline.summary.passRate,
      passRateCi95: baseline.summary.passRateCi95,
      meanCostUsd: baselineCost,
    },
    cells,
  };
}

/** The tools the agent offers, asked of the agent the way the first trial of the first case builds it. */
async function offeredTools<World>(suite: EvalSuite<World>, run: RunEvalOptions): Promise<string[]> {
  const wanted = run.cases ? new Set(run.cases) : undefined;
  const kase = suite.cases.find((candidate) => !wanted || wanted.has(candidate.id));
  if (!kase) throw new ConfigurationError('suite.cases', 'the fault matrix needs at least one case');
  const seed = trialSeed(run.seed ?? 1, kase.id, 0);
  const base = { caseId: kase.id, trial: 0, seed, random: seededRandom(seed) };
  const world = (kase.world ? await kase.world(base) : undefined) as World;
  const config = await suite.agent({ ...base, world, case: kase });
  const names = (config.tools ?? []).map((tool) => tool.name);
  const allowed = config.allowedTools ? new Set(config.allowedTools) : undefined;
  return names.filter((name) => !allowed || allowed.has(name));
}
