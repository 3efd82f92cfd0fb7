import type { ContextEdit } from '../context/context-edit.js';
import type { ContextMiss } from '../context/context-policy.js';
import type { ErrorInfo } from '../errors/error-info.js';
import type { ApprovalRequest } from '../loop/approval.js';
import type { BudgetName, BudgetPhase, HardErrorSource, Outcome } from '../loop/outcome.js';
import type { RunState } from '../loop/run-state.js';
import type { MediaBlock, Message } from '../model/content.js';
import type { ModelResponse, ModelSettings, ToolChoice, ToolDefinition, Usage } from '../model/model.js';
import type { PipelineOutcome, StageFailure } from '../pipeline/pipeline-outcome.js';
import type { Truncation } from '../tools/result-size.js';

/** The trace schema version. Bump it when an event changes shape; keep a fixture of every version. */
export const traceVersion = 1;

/** The limits a run used, recorded so a replay applies the same ones. */
export interface RecordedLimits {
  maxSteps: number;
  repeatLimit: number | null;
  maxContextTokens: number | null;
  maxBilledTokens: number | null;
  maxSpendUsd: number | null;
  maxWallMs: number | null;
  maxToolErrors: number | null;
  drift: { window: number; minDistinct: number } | null;
  onStepLimit: 'final-answer' | 'stop';
  finalAnswerPrompt: string;
  giveUpTool: string | null;
  toolTimeoutMs: number;
  toolConcurrency: number;
  maxOutputTokens: number | null;
  estimator: string;
  /** Added after v1's first release; absent in older traces. */
  maxResultTokens?: number | null;
  writesDisabled?: boolean;
  taint?: { enabled: boolean; onTaintedCall: 'ask' | 'deny' };
}

/** How a single tool call was settled. */
export type ToolCallStatus =
  | 'ok'
  | 'error'
  | 'denied'
  | 'invalid_input'
  | 'invalid_json'
  | 'invalid_output'
  | 'unknown_tool'
  | 'timeout'
  | 'aborted'
  | 'fatal'
  | 'validation_error'
  | 'denied_by_human'
  | 'blocked_repeat'
  | 'blocked_tainted'
  | 'writes_disabled'
  | 'drafted'
  | 'proposed';

/** One figure a budget check compared. */
export interface BudgetReading {
  budget: BudgetName;
  limit: number;
  actual: number;
  ok: boolean;
}

interface Base {
  v: typeof traceVersion;
  runId: string;
  /** Position in this run's trace, from 0. */
  seq: number;
  /** Epoch milliseconds from the run's clock. */
  at: number;
}

export interface RunStartEvent extends Base {
  type: 'run-start';
  model: string;
  system: string;
  messages: Message[];
  tools: ToolDefinition[];
  actorId: string | null;
  limits: RecordedLimits;
  prices: Record<string, unknown> | null;
  /** Set when this trace continues a checkpointed run. */
  resumedFrom: RunState | null;
  /** The run's model settings, when it set any. */
  modelSettings?: ModelSettings;
  /**
   * Which continuation of the run this is: 0 for a fresh run, one more for each resume. Absent in
   * traces written before segments existed. Events from this one's `seq` up to the next run-start
   * of the same run belong to it.
   */
  segment?: number;
}
/** `prepareStep` changed what a call sends; a replay applies the same changes. */
export interface StepPrepareEvent extends Base {
  type: 'step-prepare';
  step: number;
  changes: {
    messages?: Message[];
    system?: string;
    activeTools?: string[];
    /** The name of the model called instead. */
    model?: string;
    toolChoice?: ToolChoice;
    maxOutputTokens?: number;
    /** Model settings for this call, as `prepareStep` gave them (merged over the run's). */
    settings?: ModelSettings;
  };
  /** The estimated prefill of the prepared request. */
  contextTokens: number;
}
/**
 * The context policy changed the window: one event per edit, with the window's tokens (messages
 * only) before and after. A replay applies the same edits at the same step.
 */
export interface ContextEditEvent extends Base {
  type: 'context-edit';
  step: number;
  policy: string;
  edit: ContextEdit;
  tokensBefore: number;
  tokensAfter: number;
}
/**
 * What one call's window held beside the call before it: the prefix a provider cache can still
 * serve, and what the edits since invalidated. Written before each call of a run with a policy.
 */
export interface ContextWindowEvent extends Base {
  type: 'context-window';
  step: number;
  /** Messages sent, of the transcript's `transcriptMessages`. */
  messages: number;
  transcriptMessages: number;
  /** The whole prefill: system, tools and the window. */
  contextTokens: number;
  /** Tokens of the transcript had it been sent whole (what the policy saved is the difference). */
  transcriptTokens: number;
  /** System, tools and the window's leading messages unchanged since the last call. */
  stablePrefixTokens: number;
  invalidatedTokens: number;
  /** Ranges shown as a digest or a marker, and the keys of the pinned blocks. */
  ranges: number;
  pins: string[];
  /** The message index the policy put a cache breakpoint on, when it placed one. */
  cacheBreakpoint?: number;
}
/** The context policy's own model calls (a summarizer): charged to the run, and again by a replay. */
export interface ContextSpendEvent extends Base {
  type: 'context-spend';
  step: number;
  model: string;
  usage: Usage;
}
/** Something the window needed and did not have (a recall with no hit, a ruled-out approach repeated). */
export interface ContextMissEvent extends Base {
  type: 'context-miss';
  step: number;
  miss: ContextMiss;
}
export interface StepStartEvent extends Base {
  type: 'step-start';
  step: number;
  /** The estimated prefill of this step's call. */
  contextTokens: number;
  billedTokens: number;
  costUsd: number;
  toolsEnabled: boolean;
}
export interface BudgetCheckEvent extends Base {
  type: 'budget-check';
  step: number;
  phase: BudgetPhase;
  readings: BudgetReading[];
  ok: boolean;
}
export interface ModelResponseEvent extends Base {
  type: 'model-response';
  step: number;
  /** In a pipeline: the model stage that made the call (`step` counts the pipeline's calls). */
  stage?: string;
  response: ModelResponse;
  /** The text the model wrote alongside its tool calls: its stated reasoning. */
  thought: string;
  usageEstimated: boolean;
  prefillTokens: number;
  costUsd: number;
  contextTokens: number;
  billedTokens: number;
  durationMs: number;
}
export interface ModelErrorEvent extends Base {
  type: 'model-error';
  step: number;
  /** In a pipeline: the model stage that made the call. */
  stage?: string;
  error: ErrorInfo;
  /** The unreadable response itself, when the model returned one. */
  response?: unknown;
  durationMs: number;
}
export interface RepeatCheckEvent extends Base {
  type: 'repeat-check';
  step: number;
  callId: string;
  tool: string;
  key: string;
  count: number;
  limit: number;
  repeated: boolean;
}
export interface AuthorizationEvent extends Base {
  type: 'authorization';
  step: number;
  callId: string;
  tool: string;
  actorId: string | null;
  allowed: boolean;
  reason: string | null;
}
export interface ToolCallEvent extends Base {
  type: 'tool-call';
  step: number;
  callId: string;
  tool: string;
  input: unknown;
}
export interface ToolResultEvent extends Base {
  type: 'tool-result';
  step: number;
  callId: string;
  tool: string;
  status: ToolCallStatus;
  /** Exactly what the model is shown. */
  content: string;
  isError: boolean;
  resultTokens: number;
  durationMs: number;
  /** Internal detail (the thrown error); never shown to the model. */
  error: ErrorInfo | null;
  /** Set when the result was cut to fit `maxResultTokens`. */
  truncation?: Truncation;
  /** Images and documents the tool returned beside the text (`withAttachments`). */
  attachments?: MediaBlock[];
  /** The result came from a source the agent does not control. */
  untrusted?: boolean;
  /** Values from trusted output fields, which count as trusted provenance later. */
  trustedValues?: unknown[];
  /** A callback around the call threw (output schema, invariants): the run ended `hard_error`. */
  failure?: { source: HardErrorSource; error: ErrorInfo };
}
export interface TaintCheckEvent extends Base {
  type: 'taint-check';
  step: number;
  callId: string;
  tool: string;
  tainted: boolean;
  /**
   * `provenance`: every sensitive argument has a trusted source. `policy`: the tool's policy (and
   * the plan) held. `allow_list`: an allow-list entry waived the provenance rule. `blocked`: stopped.
   */
  verdict: 'provenance' | 'policy' | 'allow_list' | 'blocked';
  untrustedArguments: string[];
  /** Why each argument stopped the call (`to: must come from user`). */
  reasons?: string[];
}
export interface ApprovalRequestEvent extends Base {
  type: 'approval-request';
  step: number;
  request: ApprovalRequest;
}
export interface ApprovalEvent extends Base {
  type: 'approval';
  step: number;
  approvalId: string;
  /** `stale`: the verdict names a call that no longer exists or was changed since it was asked about. */
  decision: 'approve' | 'deny' | 'edit' | 'stale';
  by: string | null;
  reason: string | null;
  input?: unknown;
}
export interface ToolLateResultEvent extends Base {
  type: 'tool-late-result';
  step: number;
  callId: string;
  tool: string;
  settled: 'resolved' | 'rejected';
  afterMs: number;
}
export interface ProgressCheckEvent extends Base {
  type: 'progress-check';
  step: number;
  worldState: string | null;
  drifting: { signal: 'novelty' | 'world_state'; detail: string } | null;
}
export interface StepEndEvent extends Base {
  type: 'step-end';
  step: number;
  /** The prefill the next call will send. */
  contextTokens: number;
  billedTokens: number;
  costUsd: number;
  toolErrors: number;
}
export interface RunEndEvent extends Base {
  type: 'run-end';
  outcome: Outcome;
  steps: number;
  contextTokens: number;
  billedTokens: number;
  costUsd: number;
  usage: Usage;
}

/** A pipeline run begins (or resumes: `segment` > 0). Its stages' events follow under the same `runId`. */
export interface PipelineStartEvent extends Base {
  type: 'pipeline-start';
  pipeline: string;
  input: unknown;
  segment: number;
  /** Stages already completed (and not run again), when it resumes. */
  completedStages: number;
  /** The job's spender name for this pipeline. */
  spender: string;
}
/** A stage starts: its path, and what kind of stage it is. */
export interface StageStartEvent extends Base {
  type: 'stage-start';
  stage: string;
  kind: 'function' | 'model' | 'chain' | 'route' | 'fan-out' | 'fan-in';
}
/** A stage ended: its output (JSON) or the failure that stops the pipeline. */
export interface StageEndEvent extends Base {
  type: 'stage-end';
  stage: string;
  kind: StageStartEvent['kind'];
  status: 'ok' | 'failed' | 'restored';
  /** The output, when ok or restored (from the stage store on resume: the stage did not run). */
  output?: unknown;
  failure?: StageFailure;
  durationMs: number;
}
/** A route chose a branch: the classifier's label, and the fallback when the label names none. */
export interface RouteEvent extends Base {
  type: 'route';
  stage: string;
  label: string;
  branch: string;
  fallback: boolean;
}
/** The pipeline's outcome and its bill. */
export interface PipelineEndEvent extends Base {
  type: 'pipeline-end';
  outcome: PipelineOutcome<unknown>;
  modelCalls: number;
  billedTokens: number;
  costUsd: number;
  usage: Usage;
}

/** Every event a run emits, keyed on `type`. */
export type TraceEvent =
  | RunStartEvent
  | StepStartEvent
  | BudgetCheckEvent
  | ModelResponseEvent
  | ModelErrorEvent
  | RepeatCheckEvent
  | AuthorizationEvent
  | ToolCallEvent
  | ToolResultEvent
  | ProgressCheckEvent
  | StepEndEvent
  | RunEndEvent
  | TaintCheckEvent
  | ApprovalRequestEvent
  | ApprovalEvent
  | ToolLateResultEvent
  | StepPrepareEvent
  | ContextEditEvent
  | ContextWindowEvent
  | ContextMissEvent
  | ContextSpendEvent
  | PipelineStartEvent
  | StageStartEvent
  | StageEndEvent
  | RouteEvent
  | PipelineEndEvent;

/** An event before the loop stamps it with version, run id, sequence number and time. */
export type TraceEventBody = TraceEvent extends infer E
  ? E extends TraceEvent
    ? Omit<E, keyof Base>
    : never
  : never;
