import { isRevisionedStore } from '../checkpoint/checkpoint-store.js';
import type { ContextEdit } from '../context/context-edit.js';
import { ContextWindow } from '../context/context-window.js';
import { DriftMonitor } from '../controls/drift-monitor.js';
import { PriceMemo } from '../controls/price.js';
import { RepeatDetector } from '../controls/repeat-detector.js';
import { leavesAt, leavesOf, TaintLedger, withoutEchoes } from '../controls/taint-ledger.js';
import { ReinsError } from '../errors/reins-error.js';
import { carriesExternalData, type Message, type ToolResultBlock } from '../model/content.js';
import type { Model, ModelSettings, ToolChoice, ToolDefinition, Usage } from '../model/model.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { BudgetReading, StepPrepareEvent } from '../trace/events.js';
import { linkedController } from './abort.js';
import { delimitUntrusted, isDelimited } from './dispatch/size-result.js';
import type { LoopSetup } from './loop-setup.js';
import { LoopStop } from './loop-stop.js';
import type { Outcome } from './outcome.js';
import {
  type Handoff,
  type PendingBatch,
  type RunState,
  runStateVersion,
  type ToolStats,
} from './run-state.js';
import type { BatchRuntime } from './stages/batch-runtime.js';
import type { Committed } from './stages/checkpoint-write.js';
import { RunDeadlines } from './stages/run-deadlines.js';
import { TraceEmitter } from './trace-emitter.js';

/** The request one step sends, after `prepareStep`. */
export interface PreparedCall {
  model: Model;
  system: string;
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  toolChoice: ToolChoice;
  maxOutputTokens: number | undefined;
  /** Provider features for this call: the run's, with the step's changes over them. */
  settings: ModelSettings | undefined;
  /** The tools this step offers, when `prepareStep` narrowed them. */
  offered: ReadonlySet<string> | undefined;
  contextTokens: number;
}

/**
 * The one explicit, mutable value the stages work on: the transcript, the counters, the controls'
 * memories and the run's signal. `toRunState` turns it into the serialized {@link RunState}.
 */
export interface LoopState {
  readonly setup: LoopSetup;
  /** The full, append-only transcript. */
  readonly messages: Message[];
  usage: Usage;
  billedTokens: number;
  costUsd: number;
  contextTokens: number;
  toolErrors: number;
  completedSteps: number;
  completedMessages: number;
  /** The step the result reports: the last one started. */
  lastStep: number;
  lastModelId: string | undefined;
  /** Clock time the run began, less the time earlier segments used. */
  readonly startedAt: number;
  readonly taint: TaintLedger;
  readonly terminal: Set<string>;
  readonly terminalList: string[];
  readonly toolStats: Record<string, ToolStats>;
  readonly changedStats: Set<string>;
  readonly handoffs: Handoff[];
  pending: PendingBatch | null;
  readonly repeats: RepeatDetector | undefined;
  readonly drift: DriftMonitor | undefined;
  readonly trace: TraceEmitter;
  /** The checkpoint revision of the state as last committed. */
  revision: number;
  /** This segment holds the run: claimed before its first model call or tool execution. */
  claimed: boolean;
  /** What `prepareStep` changed for the call being prepared, until it is recorded. */
  pendingPrepare: StepPrepareEvent['changes'] | undefined;
  committed: Committed | undefined;
  /** One controller for the whole run; batches and calls read it through lazy signals. */
  readonly run: AbortController;
  readonly unlink: () => void;
  /** The batch running now, told when the run's signal aborts. */
  batch: BatchRuntime | undefined;
  /** Every tool call's deadline, on one timer for the run. */
  readonly deadlines: RunDeadlines;
  wallTimer: unknown;
  /** Prices resolved once per pair of model ids, for the budget checks and the bill. */
  readonly prices: PriceMemo | undefined;
  /** The readings of the last `budget-check` written (for `traceBudgetChecks: 'changes'`). */
  lastBudgetReadings: readonly BudgetReading[] | undefined;
  /**
   * Rejects the pending model call's promise when the run's signal aborts: it stops waiting. The
   * promise's own `reject`, so a call costs no closure for it; a stale one rejects a settled promise,
   * which does nothing.
   */
  onModelAbort: ((reason: unknown) => void) | undefined;
  /** The window the context policy shapes over the transcript; undefined without a policy. */
  readonly window: ContextWindow | undefined;
}

export function createLoopState(setup: LoopSetup): LoopState {
  const initial = setup.state;
  const { limits, clock } = setup;
  const taint = seedLedger(setup);
  const repeats =
    limits.repeatLimit === null ? undefined : new RepeatDetector(limits.repeatLimit, initial.repeatCounts);
  // Only a revisioned store reads the changed keys (a delta checkpoint); without one the record of
  // changes would grow by a key a step for the whole run, and nothing would ever take it.
  if (setup.checkpoint !== undefined && isRevisionedStore(setup.checkpoint)) repeats?.trackChanges();
  const { controller: run, dispose: unlink } = linkedController(setup.signal);
  const terminalList = [...(initial.terminalFailures ?? [])];
  const state: LoopState = {
    setup,
    messages: [...initial.messages],
    usage: { ...initial.usage },
    billedTokens: initial.billedTokens,
    costUsd: initial.costUsd,
    contextTokens: initial.contextTokens,
    toolErrors: initial.toolErrors,
    completedSteps: initial.step,
    completedMessages: initial.completedMessages,
    lastStep: initial.step,
    lastModelId: undefined,
    startedAt: clock.now() - initial.elapsedMs,
    taint,
    terminal: new Set(terminalList),
    terminalList,
    // Null prototype: a tool named `__proto__` or `toString` is a key like any other.
    toolStats: Object.assign(
      Object.create(null) as Record<string, ToolStats>,
      structuredClone(initial.toolStats ?? {}),
    ),
    changedStats: new Set(),
    handoffs: [...(initial.handoffs ?? [])],
    pending: initial.pending ?? null,
    repeats,
    drift: limits.drift === null ? undefined : new DriftMonitor(limits.drift, initial.drift ?? undefined),
    trace: new TraceEmitter(setup),
    revision: initial.revision ?? 0,
    claimed: false,
    pendingPrepare: undefined,
    committed: undefined,
    run,
    unlink,
    batch: undefined,
    deadlines: new RunDeadlines(clock),
    prices: setup.prices ? new PriceMemo(setup.prices) : undefined,
    lastBudgetReadings: undefined,
    onModelAbort: undefined,
    wallTimer: undefined,
    window: undefined,
  };
  if (setup.context || initial.contextEdits?.length) {
    const messages = state.messages;
    (state as { window: ContextWindow }).window = openWindow(setup, messages);
  }
  // One listener for the whole run forwards an abort to whichever batch is running.
  run.signal.addEventListener(
    'abort',
    () => {
      state.onModelAbort?.(new LoopStop(undefined, 'during-call'));
      state.batch?.abort(run.signal.reason);
    },
    { once: true },
  );
  return state;
}

/** The window over the transcript, with the edits a checkpoint carries; a bad edit is a corrupt state. */
function openWindow(setup: LoopSetup, messages: Message[]): ContextWindow {
  const counter = setup.counter;
  try {
    return new ContextWindow(messages, (message) => counter.message(message), setup.state.contextEdits ?? []);
  } catch (thrown) {
    throw new ReinsError('corrupt_state', `run state: contextEdits: ${(thrown as Error).message}`);
  }
}

/**
 * The ledger a segment starts with: the system prompt's and the user's words as trusted text, and
 * the taint the state carries. A resumed state carries its ledger. A conversation continued by
 * passing earlier messages as `input` has none, so its tool results are read here: each is
 * untrusted unless the `tool_use` that asked for it names a tool of this run with trusted output.
 * Untrusted history stays untrusted however the conversation is continued.
 */
function seedLedger(setup: LoopSetup): TaintLedger {
  const initial = setup.state;
  const taint = new TaintLedger(initial.taint ?? undefined);
  if (initial.system !== '') taint.noteTrustedText(initial.system, 'system');
  const readResults = initial.taint === undefined || initial.taint === null;
  // The input itself may be untrusted (a parent agent's words after it read untrusted data).
  const untrustedInput = setup.untrustedInput === true && readResults;
  if (untrustedInput) taint.noteResult(true, []);
  const toolOfCall = new Map<string, string>();
  const inputOfCall = new Map<string, unknown>();
  for (const message of initial.messages) {
    if (message.role === 'assistant') {
      for (const block of message.content)
        if (block.type === 'tool_use') {
          toolOfCall.set(block.id, block.name);
          inputOfCall.set(block.id, block.input);
        }
      // Server-side tool results in the history are untrusted, as they were when they arrived.
      if (readResults && carriesExternalData(message.content)) taint.noteResult(true, []);
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') {
        if (!untrustedInput) taint.noteTrustedText(block.text);
      } else if (block.type === 'tool_result' && readResults) {
        const name = toolOfCall.get(block.toolUseId);
        noteHistoricResult(
          taint,
          block,
          name === undefined ? undefined : setup.tools?.get(name),
          inputOfCall.get(block.toolUseId),
        );
      }
    }
  }
  return taint;
}

/** A result from the history, as the ledger would have noted it when it arrived. */
function noteHistoricResult(
  taint: TaintLedger,
  block: ToolResultBlock,
  tool: AnyTool | undefined,
  input: unknown,
): void {
  // A trusted tool's result that was delimited when it arrived was marked untrusted (`untrustedResult`).
  if (tool === undefined || (tool.trustedOutput && !block.isError && isDelimited(block.content))) {
    taint.noteResult(true, []);
    return;
  }
  // Errors vouch for no values, as in a live run.
  const output = block.isError
    ? undefined
    : parsed(tool.trustedOutput ? block.content : undelimited(tool.name, block.content));
  // As live: values a result echoes from its own call's input vouch for nothing, raw or as the
  // tool's schema handed it over (a synchronous schema is re-run; zod's are).
  const validated = tool.validate(input);
  const inputs = !(validated instanceof Promise) && validated.ok ? [input, validated.value] : [input];
  const fresh = (leaves: { path: string; value: unknown }[]) => withoutEchoes(leaves, inputs);
  if (tool.trustedOutput)
    taint.noteResult(false, output === undefined ? [] : fresh(leavesOf(output)), tool.name);
  else {
    const values =
      output === undefined ? [] : fresh(tool.trustedOutputFields.flatMap((path) => leavesAt(output, path)));
    taint.noteResult(true, values, tool.name);
  }
  if (tool.privateOutput && output !== undefined)
    taint.notePrivate(leavesOf(output).map((leaf) => leaf.value));
}

function parsed(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/** The result inside the delimiter a live run put around untrusted output, unescaped. */
function undelimited(tool: string, content: string): string {
  const empty = delimitUntrusted(tool, '');
  const open = empty.slice(0, empty.indexOf('\n') + 1);
  const close = empty.slice(open.length);
  if (!content.startsWith(open) || !content.endsWith(close)) return content;
  return content
    .slice(open.length, content.length - close.length)
    .replace(/&lt;(\/?tool-output)/gi, (_tag, name: string) => `<${name}`);
}

/** The serializable state, as a checkpoint or a result holds it. */
export function toRunState(state: LoopState, status: RunState['status'], outcome: Outcome | null): RunState {
  const now = state.setup.clock.now();
  const initial = state.setup.state;
  return {
    version: runStateVersion,
    runId: state.setup.runId,
    status,
    step: state.completedSteps,
    system: initial.system,
    messages: state.messages,
    completedMessages: state.completedMessages,
    usage: state.usage,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
    contextTokens: state.contextTokens,
    toolErrors: state.toolErrors,
    repeatCounts: state.repeats ? state.repeats.entries() : [],
    drift: state.drift ? state.drift.state() : null,
    elapsedMs: Math.max(0, now - state.startedAt),
    startedAt: initial.startedAt,
    updatedAt: now,
    outcome,
    pending: state.pending,
    taint: state.taint.state(),
    terminalFailures: state.terminalList,
    toolStats: state.toolStats,
    handoffs: state.handoffs,
    ...(state.window ? { contextEdits: state.window.edits as ContextEdit[] } : {}),
    revision: state.revision,
    trace: state.trace.cursor(),
  };
}

/** The per-tool counters, made on first use and marked changed for the next checkpoint. */
export function statsOf(state: LoopState, tool: string): ToolStats {
  state.changedStats.add(tool);
  let entry = Object.hasOwn(state.toolStats, tool) ? state.toolStats[tool] : undefined;
  if (!entry) {
    entry = {
      calls: 0,
      ok: 0,
      errors: 0,
      validationFailures: 0,
      validationFailureRate: 0,
      truncated: 0,
      denied: 0,
      approvalsRequested: 0,
    };
    state.toolStats[tool] = entry;
  }
  return entry;
}
