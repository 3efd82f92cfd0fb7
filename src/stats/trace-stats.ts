import type { Outcome } from '../loop/outcome.js';
import type { ToolCallStatus, TraceEvent } from '../trace/events.js';
import { isEnding, isSilentFailure } from './silent-failure.js';

/** One tool's calls, by how each was settled. */
export interface ToolCallStats {
  calls: number;
  /** Results the model was shown as errors (`isError`): thrown, denied, invalid, timed out… */
  errors: number;
  /** `errors / calls`. */
  errorRate: number;
  byStatus: Partial<Record<ToolCallStatus, number>>;
}

/** The headline figures of one UTC day (runs bucketed by the day they ended). */
export interface DailyStats {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  runs: number;
  silentFailureRatio: number | null;
  stepLimitRate: number | null;
  costPerSuccessUsd: number | null;
}

/**
 * What a set of runs did, from their trace events. A run counts once, by its last `run-end` (a run
 * paused for approval and resumed counts by how it finally ended). Ratios are `null` when their
 * denominator is zero.
 */
export interface TraceStats {
  /** Runs with a `run-end`. */
  runs: number;
  /** Runs by the kind of their last outcome; sums to `runs`. */
  byOutcome: Partial<Record<Outcome['kind'], number>>;
  /** Runs whose last outcome ends them (every kind but `awaiting_approval` and `stale_state`). */
  endedRuns: number;
  /** Ended runs whose outcome is a silent failure (see `silentFailureKinds`). */
  silentFailures: number;
  /** `silentFailures / endedRuns`: the failure rate an exception counter does not show. */
  silentFailureRatio: number | null;
  /** `step_limit / endedRuns`. */
  stepLimitRate: number | null;
  /** `hard_error / endedRuns`: the failures that did throw, to set beside the silent ones. */
  hardErrorRate: number | null;
  /** Spend of every run (each run's last `run-end.costUsd`). */
  costUsd: number;
  /** `costUsd / runs`. */
  costPerRunUsd: number | null;
  /** `costUsd / answered`: what one success costs once the failed runs' spend is paid too. */
  costPerSuccessUsd: number | null;
  /** Spend of runs that ended in anything but `answered`. */
  failureCostUsd: number;
  modelCalls: number;
  modelErrors: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
  toolErrors: number;
  /** `toolErrors / toolCalls`. */
  toolErrorRate: number | null;
  tools: Record<string, ToolCallStats>;
  /**
   * The "agent or workflow?" tell: of each run's consecutive tool calls (A then B), the share where
   * B was the most common successor of A over all runs. Near 1, the model keeps choosing the same
   * next tool: a fixed workflow would do that job for less.
   */
  nextToolPredictability: number | null;
  toolTransitions: number;
  /** Per UTC day, oldest first. */
  days: DailyStats[];
}

interface RunRecord {
  kind: Outcome['kind'];
  costUsd: number;
  day: string;
}

interface DayTally {
  runs: number;
  ended: number;
  silent: number;
  stepLimit: number;
  answered: number;
  costUsd: number;
}

/**
 * Folds trace events into {@link TraceStats}, one event at a time, so a live sink and the offline
 * `reins stats` compute the same figures. Feed each run's events in `seq` order. It keeps a record
 * only of runs still open (the last tool each called) or paused for approval.
 */
export class TraceStatsCollector {
  readonly #byOutcome = new Map<Outcome['kind'], number>();
  readonly #days = new Map<string, DayTally>();
  readonly #paused = new Map<string, RunRecord>();
  readonly #lastTool = new Map<string, string>();
  readonly #transitions = new Map<string, Map<string, number>>();
  readonly #tools = new Map<
    string,
    { calls: number; errors: number; byStatus: Map<ToolCallStatus, number> }
  >();
  #runs = 0;
  #ended = 0;
  #silent = 0;
  #costUsd = 0;
  #failureCostUsd = 0;
  #modelCalls = 0;
  #modelErrors = 0;
  #inputTokens = 0;
  #outputTokens = 0;

  add(event: TraceEvent): void {
    switch (event.type) {
      case 'model-response': {
        this.#modelCalls++;
        const usage = event.response.usage;
        if (usage) {
          this.#inputTokens += usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
          this.#outputTokens += usage.outputTokens;
        }
        return;
      }
      case 'model-error':
        this.#modelCalls++;
        this.#modelErrors++;
        return;
      case 'tool-result':
        this.#toolResult(event.runId, event.tool, event.status, event.isError);
        return;
      case 'run-end':
        this.#runEnd(event.runId, {
          kind: event.outcome.kind,
          costUsd: event.costUsd,
          day: utcDay(event.at),
        });
        return;
      default:
        return;
    }
  }

  #toolResult(runId: string, tool: string, status: ToolCallStatus, isError: boolean): void {
    let stats = this.#tools.get(tool);
    if (!stats) {
      stats = { calls: 0, errors: 0, byStatus: new Map() };
      this.#tools.set(tool, stats);
    }
    stats.calls++;
    if (isError) stats.errors++;
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
    const previous = this.#lastTool.get(runId);
    this.#lastTool.set(runId, tool);
    if (previous === undefined) return;
    let next = this.#transitions.get(previous);
    if (!next) {
      next = new Map();
      this.#transitions.set(previous, next);
    }
    next.set(tool, (next.get(tool) ?? 0) + 1);
  }

  #runEnd(runId: string, record: RunRecord): void {
    const earlier = this.#paused.get(runId);
    if (earlier) {
      this.#paused.delete(runId);
      this.#tally(earlier, -1);
    }
    this.#tally(record, 1);
    if (record.kind === 'awaiting_approval') this.#paused.set(runId, record);
    else this.#lastTool.delete(runId);
  }

  /** Adds (`sign` 1) or takes back (-1, a paused run that went on) one run's contribution. */
  #tally(record: RunRecord, sign: 1 | -1): void {
    const { kind, costUsd } = record;
    this.#runs += sign;
    this.#byOutcome.set(kind, (this.#byOutcome.get(kind) ?? 0) + sign);
    this.#costUsd += sign * costUsd;
    if (kind !== 'answered') this.#failureCostUsd += sign * costUsd;
    const ending = isEnding(kind);
    const silent = isSilentFailure(kind);
    if (ending) this.#ended += sign;
    if (silent) this.#silent += sign;
    let day = this.#days.get(record.day);
    if (!day) {
      day = { runs: 0, ended: 0, silent: 0, stepLimit: 0, answered: 0, costUsd: 0 };
      this.#days.set(record.day, day);
    }
    day.runs += sign;
    day.costUsd += sign * costUsd;
    if (ending) day.ended += sign;
    if (silent) day.silent += sign;
    if (kind === 'step_limit') day.stepLimit += sign;
    if (kind === 'answered') day.answered += sign;
  }

  /** The figures so far. */
  result(): TraceStats {
    const count = (kind: Outcome['kind']) => this.#byOutcome.get(kind) ?? 0;
    const byOutcome: TraceStats['byOutcome'] = {};
    for (const [kind, runs] of [...this.#byOutcome].sort(([a], [b]) => a.localeCompare(b)))
      if (runs > 0) byOutcome[kind] = runs;
    const tools: Record<string, ToolCallStats> = {};
    let toolCalls = 0;
    let toolErrors = 0;
    for (const [name, stats] of [...this.#tools].sort(([a], [b]) => a.localeCompare(b))) {
      toolCalls += stats.calls;
      toolErrors += stats.errors;
      tools[name] = {
        calls: stats.calls,
        errors: stats.errors,
        errorRate: stats.errors / stats.calls,
        byStatus: Object.fromEntries([...stats.byStatus].sort(([a], [b]) => a.localeCompare(b))),
      };
    }
    let transitions = 0;
    let predictable = 0;
    for (const next of this.#transitions.values()) {
      let most = 0;
      for (const times of next.values()) {
        transitions += times;
        if (times > most) most = times;
      }
      predictable += most;
    }
    const days = [...this.#days]
      .filter(([, tally]) => tally.runs > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([day, tally]) => ({
        day,
        runs: tally.runs,
        silentFailureRatio: ratio(tally.silent, tally.ended),
        stepLimitRate: ratio(tally.stepLimit, tally.ended),
        costPerSuccessUsd: ratio(tally.costUsd, tally.answered),
      }));
    return {
      runs: this.#runs,
      byOutcome,
      endedRuns: this.#ended,
      silentFailures: this.#silent,
      silentFailureRatio: ratio(this.#silent, this.#ended),
      stepLimitRate: ratio(count('step_limit'), this.#ended),
      hardErrorRate: ratio(count('hard_error'), this.#ended),
      costUsd: this.#costUsd,
      costPerRunUsd: ratio(this.#costUsd, this.#runs),
      costPerSuccessUsd: ratio(this.#costUsd, count('answered')),
      failureCostUsd: this.#failureCostUsd,
      modelCalls: this.#modelCalls,
      modelErrors: this.#modelErrors,
      inputTokens: this.#inputTokens,
      outputTokens: this.#outputTokens,
      toolCalls,
      toolErrors,
      toolErrorRate: ratio(toolErrors, toolCalls),
      tools,
      nextToolPredictability: ratio(predictable, transitions),
      toolTransitions: transitions,
      days,
    };
  }
}

/**
 * {@link TraceStats} of a set of trace events, in any order: grouped by run, each run's events in
 * `seq` order, the runs in the order they started.
 *
 * @example
 * ```ts
 * import { traceStats } from 'reins';
 * import { runScenario } from 'reins/scenarios';
 * const { trace } = await runScenario('loops');
 * traceStats(trace).silentFailureRatio; // 1: the run looped, and nothing threw
 * ```
 */
export function traceStats(events: Iterable<TraceEvent>): TraceStats {
  const byRun = new Map<string, TraceEvent[]>();
  for (const event of events) {
    const run = byRun.get(event.runId);
    if (run) run.push(event);
    else byRun.set(event.runId, [event]);
  }
  const runs = [...byRun.values()].map((run) => run.sort((a, b) => a.seq - b.seq));
  runs.sort((a, b) => (a[0]?.at ?? 0) - (b[0]?.at ?? 0));
  const collector = new TraceStatsCollector();
  for (const run of runs) for (const event of run) collector.add(event);
  return collector.result();
}

function ratio(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

function utcDay(at: number): string {
  return Number.isFinite(at) ? new Date(at).toISOString().slice(0, 10) : 'unknown';
}
