import type { JobBudget } from '../budget/job-budget.js';
import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { ContextPolicy } from '../context/context-policy.js';
import type { PriceTable } from '../controls/price.js';
import type { Model, ModelSettings, ToolDefinition } from '../model/model.js';
import type { SpendLimiter } from '../resilience/spend-limiter.js';
import type { Clock } from '../time/clock.js';
import type { PrefillCounter } from '../tokens/token-estimator.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { RecordedLimits } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import type { ApprovalVerdict } from './approval.js';
import type { Dispatcher } from './call-plan.js';
import type { PrepareStep, ToolExecutionWrapper, WorldStateContext } from './options.js';
import type { RunState } from './run-state.js';

/**
 * Everything the stages read, validated and resolved once (`resolveRun`). Live runs and replays
 * both build one; nothing in it changes while the run goes on, but for the tool wrapper that a
 * wrapper itself declines once the run's start is traced (`ToolExecutionWrapper.ignores`).
 */
export interface LoopSetup {
  runId: string;
  model: Model;
  dispatcher: Dispatcher;
  /** The live dispatcher's options (absent in a replay): its `wrapToolExecution` is dropped for a run the wrapper ignores. */
  dispatchOptions?: { wrapToolExecution?: ToolExecutionWrapper | undefined };
  /**
   * Every tool of the run by name, to tell which tool results in the input history a trusted tool
   * returned. Without it (a replay) every such result is untrusted.
   */
  tools?: ReadonlyMap<string, AnyTool>;
  toolDefinitions: ToolDefinition[];
  limits: RecordedLimits;
  counter: PrefillCounter;
  clock: Clock;
  sinks: readonly TraceSink[];
  /** Every budget check as an event, or only those whose readings changed. */
  traceBudgetChecks: 'every' | 'changes';
  checkpoint: AnyCheckpointStore | undefined;
  signal: AbortSignal | undefined;
  prices: PriceTable | undefined;
  worldState: ((context: WorldStateContext) => string | Promise<string>) | undefined;
  actorId: string | null;
  /** The state to start from: a fresh one, or a checkpoint being resumed. */
  state: RunState;
  resumed: boolean;
  /** Verdicts for the pending batch of a paused run. */
  approvals: readonly ApprovalVerdict[] | undefined;
  accountSpend: { limiter: SpendLimiter; accountId: string; limitUsd: number } | undefined;
  /** The job's budget, charged before every model call (absent: nothing per step). */
  jobBudget?: JobBudget | undefined;
  /** The input is untrusted (`taint.untrustedInput`): the ledger starts tainted. */
  untrustedInput?: boolean;
  /** Who this run is on the job's bill. */
  spender?: string;
  /** The extension point before each model call. */
  prepareStep: PrepareStep | undefined;
  /** The context policy, run at the prepare stage before `prepareStep`. */
  context: ContextPolicy | undefined;
  /** Provider features for every call (`prepareStep` may change them per step). */
  modelSettings: ModelSettings | undefined;
  /** Refuse a second continuation of the same state (off for replays, which re-run old segments). */
  exactlyOnce: boolean;
}
