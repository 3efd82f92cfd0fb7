import type { JobBudget } from '../budget/job-budget.js';
import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { ContextPolicy } from '../context/context-policy.js';
import type { DriftOptions } from '../controls/drift-monitor.js';
import type { PriceTable } from '../controls/price.js';
import type { PlannedCall, ToolPolicy } from '../controls/taint-policy.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { checkModelSettings } from '../model/check-settings.js';
import { assistantBlockTypes, type Message, userBlockTypes } from '../model/content.js';
import type { Model, ModelSettings, ToolChoice, ToolDefinition } from '../model/model.js';
import type { SpendLimiter } from '../resilience/spend-limiter.js';
import type { Clock, IdGenerator } from '../time/clock.js';
import type { TokenEstimator } from '../tokens/token-estimator.js';
import type { Actor, AnyTool } from '../tools/define-tool.js';
import type { TraceSink } from '../trace/sink.js';
import type { ApprovalVerdict } from './approval.js';
import { validateTaintOptions } from './check-taint-options.js';
import { blockProblem } from './run-state.js';

/** What an authorizer is asked about one call. */
export interface AuthorizationRequest {
  tool: AnyTool;
  /** The validated input. */
  input: unknown;
  /** The end user the run acts for; undefined when the run has none. */
  actor: Actor | undefined;
  callId: string;
  step: number;
}

/** An authorizer's answer. Anything but `{ allow: true }` denies (fail closed). */
export type AuthorizationVerdict = { allow: true } | { allow: false; reason: string };

/** Decides whether the actor may make this call. Throwing denies. */
export type Authorizer = (
  request: AuthorizationRequest,
) => AuthorizationVerdict | Promise<AuthorizationVerdict>;

/** What a world-state function is told, after each step's results are in. */
export interface WorldStateContext {
  step: number;
  messages: readonly Message[];
}

/** What `prepareStep` is shown before a model call. Read-only: return changes instead. */
export interface PrepareStepContext {
  runId: string;
  step: number;
  /** True on the final-answer call at the step limit (tools disabled). */
  final: boolean;
  /** The full, append-only transcript. */
  messages: readonly Message[];
  /**
   * What this call sends as it stands: the context policy's window when the run has one (returning
   * `messages` replaces it), else the transcript.
   */
  sending: readonly Message[];
  system: string;
  /** Every tool the run may offer. */
  tools: readonly ToolDefinition[];
  model: Model;
  toolChoice: ToolChoice;
  maxOutputTokens: number | undefined;
  /** The run's model settings (the step's changes apply over them). */
  settings: ModelSettings | undefined;
  /** The estimated prefill of the request as it stands. */
  contextTokens: number;
  billedTokens: number;
  costUsd: number;
}

/**
 * Changes to one model call. Every field is optional; each change is recorded as a `step-prepare`
 * trace event and replays. The transcript itself is never rewritten: `messages` replaces what this
 * call sends, not the history.
 */
export interface PrepareStepResult {
  /** The messages to send instead of the whole transcript (a context policy's window). */
  messages?: Message[];
  system?: string;
  /** Offer only these tools (names from the run's tools); a call to any other is refused as unknown. */
  activeTools?: readonly string[];
  /** Call this model for this step (routing). */
  model?: Model;
  /** `required` makes the model call a tool; `{ name }` that tool (one the step offers). */
  toolChoice?: ToolChoice;
  maxOutputTokens?: number;
  /** Settings for this call, merged field by field over the run's `modelSettings`. */
  settings?: ModelSettings;
}

/** The extension point before each model call: context policies, routing and telemetry plug in here. */
/** The call a {@link ToolExecutionWrapper} is wrapping. */
export interface ToolExecutionInfo {
  runId: string;
  step: number;
  callId: string;
  tool: string;
  /** When the call started, on the run's clock (epoch milliseconds with the default clock). */
  startedAt: number;
}

/**
 * Wraps each tool's `execute`: call `execute()` once, synchronously, and return what it returned
 * (a value or a promise). For putting the call inside an async context, such as a tracing span
 * the tool's own spans become children of (`reins/otel`), or a logger's request scope. A throw
 * counts as the tool's throw.
 */
export type ToolExecutionWrapper = ((execute: () => unknown, call: ToolExecutionInfo) => unknown) & {
  /**
   * Asked once the run's `run-start` is traced: `true` means the wrapper would only call `execute()`
   * for this run's calls (`reins/otel` with no SDK or context manager registered), and the run's
   * tools are then called directly, at no cost per call.
   */
  ignores?(runId: string): boolean;
};

export type PrepareStep = (
  context: PrepareStepContext,
) => PrepareStepResult | undefined | undefined | Promise<PrepareStepResult | undefined | undefined>;

/** The taint guard: untrusted content in the context stops privileged calls it could have steered. */
export interface TaintOptions {
  /** @default true */
  enabled?: boolean;
  /** Pause for a person (`ask`, the fail-closed default) or refuse the call and let the run go on (`deny`). @default 'ask' */
  onTaintedCall?: 'ask' | 'deny';
  /**
   * Writes allowed even under taint: a tool name, or a tool with a condition on its input. An
   * entry waives only the provenance rule: a tool's policy and the plan still apply. @default []
   */
  allowWhileTainted?: readonly (string | { tool: string; when?: (input: unknown) => boolean })[];
  /**
   * Policies per privileged tool, by tool name: where each argument may come from, who may read
   * private data, egress, caps. A privileged tool without one gets the provenance rule. The
   * recommended configuration gives every privileged tool a policy (docs/injection.md).
   * @default {}
   */
  policies?: Readonly<Record<string, ToolPolicy>>;
  /**
   * The privileged calls this run may make, fixed from the user's request before any untrusted
   * data arrives (by the caller, or by `planCalls`). Under taint, a privileged call that
   * matches no entry is stopped like a tainted call; an empty plan admits none. @default no plan
   */
  plan?: readonly PlannedCall[];
  /**
   * The input itself is untrusted: the run starts tainted and the input's words vouch for no
   * argument. For a sub-agent whose task a parent agent wrote after it read untrusted content
   * (`agentTool` sets it then). @default false
   */
  untrustedInput?: boolean;
}

/** The taint options a run resolved: every default filled in; `plan` stays absent without one. */
export type ResolvedTaintOptions = Required<Omit<TaintOptions, 'plan' | 'untrustedInput'>> & {
  plan: readonly PlannedCall[] | undefined;
};

/** Options for {@link runAgent}. Every limit is checked by the loop, never by the model. */
export interface RunOptions {
  model: Model;
  /** The task: a user message, or a whole conversation to continue. */
  input: string | Message[];
  tools?: readonly AnyTool[];
  /**
   * Least privilege per task: only these tools are offered, and a call to any other is refused
   * as unknown. A summarizer that cannot see `send_email` cannot be talked into using it.
   * @default every tool in `tools`
   */
  allowedTools?: readonly string[];
  /** @default '' */
  system?: string;
  /** The end user the run acts for; every tool call is authorized against this actor. */
  actor?: Actor;
  /**
   * Per-call authorization. The default requires the actor to hold every scope the tool declares
   * (and an actor to exist when a tool declares any).
   */
  authorize?: Authorizer;

  /** Model calls per run, the final-answer call included. @default 6 */
  maxSteps?: number;
  /** What to do at the step limit. @default 'final-answer' */
  onStepLimit?: 'final-answer' | 'stop';
  /** The message that asks for the best answer at the limit. */
  finalAnswerPrompt?: string;
  /** Identical `(tool, input)` proposals that end the run; `false` turns detection off. @default 3 */
  repeatLimit?: number | false;
  /** The most prefill tokens any call may send. @default 100_000 */
  maxContextTokens?: number;
  /** The most tokens (prefill plus output, summed over calls) the run may be billed. @default unlimited */
  maxBilledTokens?: number;
  /** The most USD the run may spend; needs `prices`. @default unlimited */
  maxSpendUsd?: number;
  /**
   * A spend ceiling per account, shared by every run of the account (through Redis in a fleet),
   * checked before every model call. Needs `prices`.
   */
  accountSpend?: { limiter: SpendLimiter; accountId: string; limitUsd: number };
  /**
   * One budget for the whole job this run belongs to (sub-agents, pipelines, tools that call
   * models, retries): each model call reserves its maximum (the estimated prefill plus
   * `maxOutputTokens`, at the model's price) before it is made and is settled to its usage when it
   * returns. When the job has run out, the run ends `over_budget` naming the spender. Tools reach
   * it as `context.jobBudget`; `agentTool` hands it to its sub-agent. @default none
   */
  jobBudget?: JobBudget;
  /** Who this run is on the job's bill (named in an `over_budget` outcome). @default `agent:<runId>` */
  spender?: string;
  /** Wall-clock milliseconds for the whole run, model calls included. @default unlimited */
  maxWallMs?: number;
  /** Tool errors the run tolerates before it stops early. @default unlimited */
  maxToolErrors?: number;
  /** The progress detector; `false` turns it off. @default { window: 8, minDistinct: 3 } */
  drift?: DriftOptions | false;
  /** A hash of the state that defines success (test output, open goals); unchanged across the drift window ends the run. */
  worldState?: (context: WorldStateContext) => string | Promise<string>;
  /** Offer the model a built-in tool to say it cannot complete the task. @default true (named `cannot_complete`) */
  giveUpTool?: boolean | { name: string };

  /** Per tool call, unless the tool sets its own. @default 30_000 */
  toolTimeoutMs?: number;
  /** Tool calls of one step that run at once. @default 4 */
  toolConcurrency?: number;
  /** Passed to the model on every call. */
  maxOutputTokens?: number;
  /**
   * Provider features for every call (thinking, caching, tool choice's parallel switch, stop
   * sequences, sampling, raw provider options), over the adapter's defaults; `prepareStep` may
   * override them per step. See docs/providers.md for what each provider accepts.
   */
  modelSettings?: ModelSettings;
  /** The largest tool result the model is shown, unless a tool sets its own; larger ones are cut with a marker. @default unlimited */
  maxResultTokens?: number;
  /** The largest tool input accepted, in characters of JSON. @default 262_144 */
  maxInputChars?: number;
  /** The kill switch: every tool whose effect is not 'read' refuses to run. @default true when REINS_WRITES_DISABLED is 1 or true */
  writesDisabled?: boolean;
  /** The taint guard. @default { enabled: true, onTaintedCall: 'ask' } */
  taint?: TaintOptions;
  /** Verdicts for a run that ended `awaiting_approval`, passed to `resumeAgent`. */
  approvals?: readonly ApprovalVerdict[];

  /** Prices by model id (`'*'` for any); needed for `maxSpendUsd` and cost figures. */
  prices?: PriceTable;
  /** Sizes the next prefill before a call. @default approxTokenEstimator (4 characters a token) */
  estimator?: TokenEstimator;
  /** Where trace events go. */
  trace?: TraceSink | readonly TraceSink[];
  /**
   * `'changes'` writes a `budget-check` event only when a reading other than the wall clock changed
   * since the last one written, or a reading fails (the check after a step's results and the one
   * before the next call usually read the same figures): about half the budget events, a third less
   * trace. @default 'every'
   */
  traceBudgetChecks?: 'every' | 'changes';
  /**
   * Called before every model call; may replace the messages sent, the tools offered, the model and
   * its settings for that call. A throw ends the run `hard_error` (source `prepare_step`).
   */
  prepareStep?: PrepareStep;
  /**
   * Wraps every tool execution (after every check passed, before the tool runs): see
   * {@link ToolExecutionWrapper}. Unset, a tool is called directly.
   */
  wrapToolExecution?: ToolExecutionWrapper;
  /**
   * Runs the window as a cache: before every call (ahead of `prepareStep`) the policy admits,
   * evicts, summarizes, clears and pins over the append-only transcript, each edit a
   * `context-edit` event that replays and resumes. Its tools (`recall`) join the run's. With a
   * policy, `maxContextTokens` is checked against the window the policy prepared, before the call.
   * See `contextPolicy` in `reins/context`.
   */
  context?: ContextPolicy;
  /** Saves a {@link RunState} after every step. */
  checkpoint?: AnyCheckpointStore;
  /** Aborting ends the run as `cancelled` and aborts running tools. */
  signal?: AbortSignal;
  /** @default systemClock */
  clock?: Clock;
  /** @default random UUIDs */
  generateId?: IdGenerator;
  /** @default generateId('run') */
  runId?: string;
}

export const defaultFinalAnswerPrompt =
  'You have reached the step limit for this task and cannot call any more tools. Reply now with your best answer from what you have found so far, and say what remains unknown.';

export const giveUpToolDefault = 'cannot_complete';

/** The kill switch's default: REINS_WRITES_DISABLED=1 or true in the environment, where there is one. */
export function writesDisabledFromEnvironment(): boolean {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
    'REINS_WRITES_DISABLED'
  ];
  return value === '1' || value?.toLowerCase() === 'true';
}

/** Validates the numeric options, throwing {@link ConfigurationError} for the first bad one. */
export function validateRunOptions(options: RunOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError('options', 'must be an object');
  if (typeof options.model?.generate !== 'function') {
    throw new ConfigurationError('model', 'must implement generate(request)');
  }
  validateTaintOptions(options.taint, Array.isArray(options.tools) ? options.tools : []);
  positiveInteger('maxSteps', options.maxSteps);
  positiveInteger('toolConcurrency', options.toolConcurrency);
  positiveInteger('maxOutputTokens', options.maxOutputTokens);
  if (options.modelSettings !== undefined) checkModelSettings('modelSettings', options.modelSettings);
  if (options.repeatLimit !== false) positiveInteger('repeatLimit', options.repeatLimit, 2);
  positiveNumber('maxContextTokens', options.maxContextTokens);
  positiveNumber('maxBilledTokens', options.maxBilledTokens);
  positiveNumber('maxSpendUsd', options.maxSpendUsd);
  positiveNumber('maxWallMs', options.maxWallMs);
  positiveNumber('toolTimeoutMs', options.toolTimeoutMs);
  positiveInteger('maxResultTokens', options.maxResultTokens);
  positiveInteger('maxInputChars', options.maxInputChars);
  if (options.taint?.onTaintedCall !== undefined && !['ask', 'deny'].includes(options.taint.onTaintedCall)) {
    throw new ConfigurationError(
      'taint.onTaintedCall',
      `must be 'ask' or 'deny', got ${String(options.taint.onTaintedCall)}`,
    );
  }
  nonNegativeInteger('maxToolErrors', options.maxToolErrors);
  if (options.wrapToolExecution !== undefined && typeof options.wrapToolExecution !== 'function')
    throw new ConfigurationError('wrapToolExecution', 'must be a function (execute, call) => result');
  if (
    options.traceBudgetChecks !== undefined &&
    options.traceBudgetChecks !== 'every' &&
    options.traceBudgetChecks !== 'changes'
  )
    throw new ConfigurationError(
      'traceBudgetChecks',
      `must be 'every' or 'changes', got ${String(options.traceBudgetChecks)}`,
    );
  if (options.drift) {
    positiveInteger('drift.window', options.drift.window, 2);
    positiveInteger('drift.minDistinct', options.drift.minDistinct);
    if ((options.drift.minDistinct ?? 3) > (options.drift.window ?? 8)) {
      throw new ConfigurationError('drift.minDistinct', 'cannot exceed drift.window');
    }
  }
  if (
    options.onStepLimit !== undefined &&
    options.onStepLimit !== 'final-answer' &&
    options.onStepLimit !== 'stop'
  ) {
    throw new ConfigurationError(
      'onStepLimit',
      `must be 'final-answer' or 'stop', got ${String(options.onStepLimit)}`,
    );
  }
  if (options.accountSpend !== undefined && options.accountSpend !== null) {
    positiveNumber('accountSpend.limitUsd', options.accountSpend.limitUsd);
    if (options.prices === undefined)
      throw new ConfigurationError('accountSpend', 'needs a price table in `prices` to turn tokens into USD');
  }
  if (options.maxSpendUsd !== undefined && options.prices === undefined) {
    throw new ConfigurationError('maxSpendUsd', 'needs a price table in `prices` to turn tokens into USD');
  }
  validateCollaborators(options);
  validateShapes(options);
  const job = options.jobBudget as { reserve?: unknown; settle?: unknown } | undefined;
  if (job !== undefined && (typeof job?.reserve !== 'function' || typeof job.settle !== 'function'))
    throw new ConfigurationError('jobBudget', 'must be a JobBudget');
  if (options.spender !== undefined && (typeof options.spender !== 'string' || options.spender === ''))
    throw new ConfigurationError('spender', 'must be a non-empty string');
  const names = new Set<string>();
  for (const tool of options.tools ?? []) {
    if (typeof tool?.execute !== 'function' || typeof tool.validate !== 'function') {
      throw new ConfigurationError('tools', 'every tool must come from defineTool()');
    }
    if (names.has(tool.name)) throw new ConfigurationError('tools', `two tools are named "${tool.name}"`);
    names.add(tool.name);
  }
  for (const name of options.allowedTools ?? []) {
    if (!names.has(name)) throw new ConfigurationError('allowedTools', `"${name}" is not one of the tools`);
  }
  const giveUp = giveUpToolName(options);
  if (giveUp !== null && names.has(giveUp)) {
    throw new ConfigurationError(
      'giveUpTool',
      `a tool is already named "${giveUp}"; pass giveUpTool: { name } to rename it`,
    );
  }
  if (typeof options.input !== 'string' && !Array.isArray(options.input)) {
    throw new ConfigurationError('input', 'must be a string or an array of messages');
  }
}

const optionalFunctions = ['authorize', 'worldState', 'prepareStep', 'generateId'] as const;

/** Objects whose methods the loop calls: each must have them, or it is a labeled error now rather than a TypeError later. */
function validateCollaborators(options: RunOptions): void {
  const clock = options.clock as Partial<Record<'now' | 'setTimeout' | 'clearTimeout', unknown>> | undefined;
  if (
    clock !== undefined &&
    (typeof clock !== 'object' ||
      clock === null ||
      ['now', 'setTimeout', 'clearTimeout'].some((name) => typeof clock[name as 'now'] !== 'function'))
  )
    throw new ConfigurationError('clock', 'must have now(), setTimeout() and clearTimeout()');
  const context = options.context as { prepare?: unknown; name?: unknown; tools?: unknown } | undefined;
  if (
    context !== undefined &&
    (typeof context !== 'object' ||
      context === null ||
      typeof context.prepare !== 'function' ||
      typeof context.name !== 'string' ||
      (context.tools !== undefined && !Array.isArray(context.tools)))
  )
    throw new ConfigurationError(
      'context',
      'must have a name, prepare(input) and, optionally, a tools array',
    );
  const estimator = options.estimator as { countText?: unknown; name?: unknown } | undefined;
  if (
    estimator !== undefined &&
    (typeof estimator !== 'object' ||
      estimator === null ||
      typeof estimator.countText !== 'function' ||
      typeof estimator.name !== 'string')
  )
    throw new ConfigurationError('estimator', 'must have a name and countText(text)');
  const signal = options.signal as { aborted?: unknown; addEventListener?: unknown } | undefined;
  if (
    signal !== undefined &&
    (typeof signal !== 'object' ||
      signal === null ||
      typeof signal.aborted !== 'boolean' ||
      typeof signal.addEventListener !== 'function')
  )
    throw new ConfigurationError('signal', 'must be an AbortSignal');
  if (
    options.allowedTools !== undefined &&
    (!Array.isArray(options.allowedTools) || !options.allowedTools.every((name) => typeof name === 'string'))
  )
    throw new ConfigurationError('allowedTools', 'must be an array of tool names');
  if (options.runId !== undefined && (typeof options.runId !== 'string' || options.runId === ''))
    throw new ConfigurationError('runId', 'must be a non-empty string');
  if (
    options.giveUpTool !== undefined &&
    typeof options.giveUpTool !== 'boolean' &&
    (typeof options.giveUpTool !== 'object' || options.giveUpTool === null)
  )
    throw new ConfigurationError('giveUpTool', 'must be a boolean or { name }');
  if (options.prices !== undefined && (typeof options.prices !== 'object' || options.prices === null))
    throw new ConfigurationError('prices', 'must be an object of prices by model id');
  const spend = options.accountSpend as
    | { limiter?: { spent?: unknown; add?: unknown }; accountId?: unknown }
    | undefined;
  if (
    spend !== undefined &&
    (typeof spend !== 'object' ||
      spend === null ||
      typeof spend.limiter?.spent !== 'function' ||
      typeof spend.limiter.add !== 'function' ||
      typeof spend.accountId !== 'string')
  )
    throw new ConfigurationError(
      'accountSpend',
      'must be { limiter: { spent, add }, accountId: string, limitUsd }',
    );
  if (typeof options.model?.name !== 'string') throw new ConfigurationError('model.name', 'must be a string');
}

/** The non-numeric options: each wrong type is one labeled error naming its field. */
function validateShapes(options: RunOptions): void {
  if (options.tools !== undefined && !Array.isArray(options.tools))
    throw new ConfigurationError('tools', `must be an array of tools, got ${typeof options.tools}`);
  if (options.system !== undefined && typeof options.system !== 'string')
    throw new ConfigurationError('system', `must be a string, got ${typeof options.system}`);
  if (Array.isArray(options.input)) options.input.forEach(validateMessage);
  for (const name of optionalFunctions) {
    if (options[name] !== undefined && typeof options[name] !== 'function')
      throw new ConfigurationError(name, `must be a function, got ${typeof options[name]}`);
  }
  const actor = options.actor as { id?: unknown; scopes?: unknown } | undefined;
  if (actor !== undefined) {
    if (typeof actor !== 'object' || actor === null || typeof actor.id !== 'string')
      throw new ConfigurationError('actor', 'must be an object with a string id');
    if (
      actor.scopes !== undefined &&
      (!Array.isArray(actor.scopes) || !actor.scopes.every((scope) => typeof scope === 'string'))
    )
      throw new ConfigurationError('actor.scopes', 'must be an array of strings');
  }
  for (const [model, price] of Object.entries(options.prices ?? {})) {
    for (const field of [
      'inputUsdPerMillionTokens',
      'outputUsdPerMillionTokens',
      'cacheReadUsdPerMillionTokens',
      'cacheWriteUsdPerMillionTokens',
    ] as const) {
      const value = (price as unknown as Partial<Record<string, unknown>> | null)?.[field];
      if (value === undefined && field.startsWith('cache')) continue;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new ConfigurationError(
          `prices.${model}.${field}`,
          `must be a number ≥ 0, got ${String(value)}`,
        );
    }
  }
  if (typeof options.giveUpTool === 'object' && options.giveUpTool !== null) {
    const name = (options.giveUpTool as { name?: unknown }).name;
    if (typeof name !== 'string' || name.trim() === '')
      throw new ConfigurationError('giveUpTool.name', 'must be a non-empty string');
  }
  if (options.approvals !== undefined) {
    if (!Array.isArray(options.approvals))
      throw new ConfigurationError('approvals', 'must be an array of verdicts');
    options.approvals.forEach((verdict, index) => {
      const typed = verdict as { approvalId?: unknown; decision?: unknown } | null;
      if (
        typeof typed?.approvalId !== 'string' ||
        !['approve', 'deny', 'edit'].includes(String(typed.decision))
      )
        throw new ConfigurationError(
          `approvals.${index}`,
          "must be { approvalId: string, decision: 'approve' | 'deny' | 'edit' }",
        );
    });
  }
}

function validateMessage(message: unknown, index: number): void {
  const typed = message as { role?: unknown; content?: unknown } | null;
  if (typeof typed !== 'object' || typed === null)
    throw new ConfigurationError(`input.${index}`, 'must be a message object');
  if (typed.role !== 'user' && typed.role !== 'assistant')
    throw new ConfigurationError(
      `input.${index}.role`,
      `must be 'user' or 'assistant', got ${String(typed.role)}`,
    );
  if (!Array.isArray(typed.content))
    throw new ConfigurationError(`input.${index}.content`, 'must be an array of content blocks');
  typed.content.forEach((block: unknown, at: number) => {
    const field = `input.${index}.content.${at}`;
    const typedBlock = block as {
      type?: unknown;
      text?: unknown;
      content?: unknown;
      id?: unknown;
      name?: unknown;
      toolUseId?: unknown;
    } | null;
    if (typeof typedBlock !== 'object' || typedBlock === null || typeof typedBlock.type !== 'string')
      throw new ConfigurationError(field, 'must be a content block with a type');
    if (typedBlock.type === 'text' && typeof typedBlock.text !== 'string')
      throw new ConfigurationError(`${field}.text`, 'must be a string');
    if (
      typedBlock.type === 'tool_result' &&
      (typeof typedBlock.content !== 'string' || typeof typedBlock.toolUseId !== 'string')
    )
      throw new ConfigurationError(field, 'a tool_result needs a string toolUseId and content');
    if (
      typedBlock.type === 'tool_use' &&
      (typeof typedBlock.id !== 'string' || typeof typedBlock.name !== 'string')
    )
      throw new ConfigurationError(field, 'a tool_use needs a string id and name');
    if (!assistantBlockTypes.has(typedBlock.type) && !userBlockTypes.has(typedBlock.type))
      throw new ConfigurationError(
        `${field}.type`,
        `must be one of ${[...new Set([...userBlockTypes, ...assistantBlockTypes])].join(', ')}, got ${typedBlock.type}`,
      );
    // The checkpoint's own check: what the loop could not reload is refused at the door.
    const problem = blockProblem(block, typed.role === 'assistant' ? 'assistant' : 'user');
    if (problem !== undefined) {
      const [path = '', ...words] = problem.split(' ');
      throw new ConfigurationError(
        path.startsWith('.') ? `${field}${path}` : field,
        path.startsWith('.') ? words.join(' ') : problem,
      );
    }
  });
}

export function giveUpToolName(options: Pick<RunOptions, 'giveUpTool'>): string | null {
  if (options.giveUpTool === false) return null;
  if (typeof options.giveUpTool === 'object') return options.giveUpTool.name;
  return giveUpToolDefault;
}

function positiveInteger(option: string, value: number | undefined, minimum = 1): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new ConfigurationError(option, `must be an integer ≥ ${minimum}, got ${String(value)}`);
  }
}

function nonNegativeInteger(option: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ConfigurationError(option, `must be an integer ≥ 0, got ${String(value)}`);
  }
}

function positiveNumber(option: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) {
    throw new ConfigurationError(option, `must be a number > 0, got ${String(value)}`);
  }
}
