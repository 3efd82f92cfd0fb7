import { resolvePrice } from '../controls/price.js';
import { errorInfo } from '../errors/error-info.js';
import { ConfigurationError, isConfigurationError } from '../errors/reins-error.js';
import type { Message } from '../model/content.js';
import { emptyUsage, type ToolDefinition } from '../model/model.js';
import { randomIds, systemClock } from '../time/clock.js';
import { approxTokenEstimator, PrefillCounter } from '../tokens/token-estimator.js';
import { type AnyTool, toolDefinitionOf } from '../tools/define-tool.js';
import type { RecordedLimits } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { type LiveDispatcherOptions, liveDispatcher, scopeAuthorizer } from './dispatch.js';
import type { LoopSetup } from './loop-setup.js';
import {
  defaultFinalAnswerPrompt,
  giveUpToolName,
  type RunOptions,
  validateRunOptions,
  writesDisabledFromEnvironment,
} from './options.js';
import { assertRunState, type RunState, runStateVersion } from './run-state.js';

/** Outcomes a resume continues past: the run was interrupted, not decided. */
const resumableOutcomes: ReadonlySet<string> = new Set(['hard_error', 'cancelled']);

/**
 * The one resolve: validates `options` (one labeled {@link ConfigurationError} per field) and fills
 * in every default, for a fresh run (`from` undefined) or a resumed one. The stages read only what
 * this returns.
 */
export function resolveRun(given: RunOptions, from?: RunState): LoopSetup {
  const checked = from === undefined ? undefined : assertRunState(from);
  let options = given;
  try {
    if (typeof given === 'object' && given !== null) options = withPolicyTools(given);
    validateRunOptions(checked === undefined ? options : { ...options, input: checked.messages });
  } catch (thrown) {
    if (isConfigurationError(thrown)) throw thrown;
    // Options that cannot even be read (a Proxy, a throwing getter) are invalid options all the same.
    throw new ConfigurationError('options', `could not be read: ${errorInfo(thrown).message}`);
  }
  assertPriced(options);
  const clock = options.clock ?? systemClock;
  const inReach = toolsInReach(options);
  const definitions = toolDefinitions(inReach, options);
  const counter = new PrefillCounter(options.estimator ?? approxTokenEstimator);
  let state: RunState;
  try {
    state =
      checked === undefined
        ? freshState(options, definitions, counter, clock.now())
        : reopen(checked, definitions, counter);
  } catch (thrown) {
    // Sizing the first prefill runs the estimator and reads the clock: a throw there is a bad option.
    throw new ConfigurationError('estimator', `failed on the run's input: ${errorInfo(thrown).message}`);
  }
  const limits = resolveLimits(options, counter.estimator.name);
  const dispatchOptions: LiveDispatcherOptions = {
    tools: new Map<string, AnyTool>(inReach.map((tool) => [tool.name, tool])),
    actor: options.actor,
    authorize: options.authorize ?? scopeAuthorizer,
    clock,
    runId: state.runId,
    toolTimeoutMs: limits.toolTimeoutMs,
    maxResultTokens: options.maxResultTokens,
    maxInputChars: options.maxInputChars ?? 262_144,
    writesDisabled: limits.writesDisabled ?? false,
    taint: {
      enabled: options.taint?.enabled ?? true,
      onTaintedCall: options.taint?.onTaintedCall ?? 'ask',
      allowWhileTainted: options.taint?.allowWhileTainted ?? [],
      policies: options.taint?.policies ?? {},
      plan: options.taint?.plan,
    },
    estimator: counter.estimator,
    wrapToolExecution: options.wrapToolExecution,
    jobBudget: options.jobBudget,
    spender: options.spender ?? `agent:${state.runId}`,
  };
  return {
    runId: state.runId,
    model: options.model,
    dispatcher: liveDispatcher(dispatchOptions),
    dispatchOptions,
    tools: new Map((options.tools ?? []).map((tool) => [tool.name, tool])),
    toolDefinitions: definitions,
    limits,
    counter,
    clock,
    sinks: sinksOf(options.trace),
    traceBudgetChecks: options.traceBudgetChecks ?? 'every',
    checkpoint: options.checkpoint,
    signal: options.signal,
    prices: options.prices,
    worldState: options.worldState,
    actorId: options.actor?.id ?? null,
    state,
    resumed: checked !== undefined,
    approvals: options.approvals,
    accountSpend: options.accountSpend,
    jobBudget: options.jobBudget,
    untrustedInput: options.taint?.untrustedInput === true,
    spender: options.spender ?? `agent:${state.runId}`,
    prepareStep: options.prepareStep,
    context: options.context,
    modelSettings: options.modelSettings,
    exactlyOnce: true,
  };
}

/**
 * Under a spend budget (`maxSpendUsd` or `accountSpend`) the run's model must have a price: a
 * call that no entry resolves for would otherwise count as free. The rules are `resolvePrice`'s.
 */
function assertPriced(options: RunOptions): void {
  if (options.maxSpendUsd === undefined && options.accountSpend === undefined) return;
  if (options.prices === undefined) return; // validateRunOptions names the missing table
  const name = options.model.name;
  if (resolvePrice(options.prices, name) === undefined)
    throw new ConfigurationError(
      'prices',
      `no price for model "${name}" (tried the exact id, the id without a date stamp and the longest key it starts with at a "-", "@" or ":"), so ${options.maxSpendUsd === undefined ? 'accountSpend' : 'maxSpendUsd'} cannot be enforced; add it or a "*" entry`,
    );
}

function freshState(
  options: RunOptions,
  definitions: ToolDefinition[],
  counter: PrefillCounter,
  now: number,
): RunState {
  const system = options.system ?? '';
  const messages: Message[] =
    typeof options.input === 'string'
      ? [{ role: 'user', content: [{ type: 'text', text: options.input }] }]
      : [...options.input];
  return {
    version: runStateVersion,
    runId: options.runId ?? (options.generateId ?? randomIds)('run'),
    status: 'running',
    step: 0,
    system,
    messages,
    completedMessages: messages.length,
    usage: emptyUsage(),
    billedTokens: 0,
    costUsd: 0,
    contextTokens: counter.request({ system, tools: definitions, messages }),
    toolErrors: 0,
    repeatCounts: [],
    drift: null,
    elapsedMs: 0,
    startedAt: now,
    updatedAt: now,
    outcome: null,
  };
}

/** A checkpoint made ready to continue: an interrupted run drops its unfinished step. */
function reopen(state: RunState, definitions: ToolDefinition[], counter: PrefillCounter): RunState {
  if (state.status === 'ended' && state.outcome && resumableOutcomes.has(state.outcome.kind)) {
    const messages = state.messages.slice(0, state.completedMessages);
    const contextTokens = counter.request({ system: state.system, tools: definitions, messages });
    return { ...state, status: 'running', outcome: null, messages, contextTokens, pending: null };
  }
  if (state.status === 'ended' && state.outcome?.kind === 'awaiting_approval' && state.pending) {
    // The pending batch runs with the verdicts in `options.approvals`; calls without one stay paused.
    return { ...state, status: 'running', outcome: null };
  }
  return state;
}

/** The limits a run applies, with defaults filled in. */
export function resolveLimits(options: RunOptions, estimatorName: string): RecordedLimits {
  const drift =
    options.drift === false
      ? null
      : { window: options.drift?.window ?? 8, minDistinct: options.drift?.minDistinct ?? 3 };
  return {
    maxSteps: options.maxSteps ?? 6,
    repeatLimit: options.repeatLimit === false ? null : (options.repeatLimit ?? 3),
    maxContextTokens: options.maxContextTokens ?? 100_000,
    maxBilledTokens: options.maxBilledTokens ?? null,
    maxSpendUsd: options.maxSpendUsd ?? null,
    maxWallMs: options.maxWallMs ?? null,
    maxToolErrors: options.maxToolErrors ?? null,
    drift,
    onStepLimit: options.onStepLimit ?? 'final-answer',
    finalAnswerPrompt: options.finalAnswerPrompt ?? defaultFinalAnswerPrompt,
    giveUpTool: giveUpToolName(options),
    toolTimeoutMs: options.toolTimeoutMs ?? 30_000,
    toolConcurrency: options.toolConcurrency ?? 4,
    maxOutputTokens: options.maxOutputTokens ?? null,
    estimator: estimatorName,
    maxResultTokens: options.maxResultTokens ?? null,
    writesDisabled: options.writesDisabled ?? writesDisabledFromEnvironment(),
    taint: { enabled: options.taint?.enabled ?? true, onTaintedCall: options.taint?.onTaintedCall ?? 'ask' },
  };
}

/** The context policy's tools (`recall`) join the run's, checked like any other (a clash of names is a labeled error). */
function withPolicyTools(options: RunOptions): RunOptions {
  const context = options.context as { tools?: unknown } | undefined;
  if (
    typeof context !== 'object' ||
    context === null ||
    !Array.isArray(context.tools) ||
    context.tools.length === 0
  )
    return options;
  const tools = context.tools as AnyTool[];
  const widened = { ...options, tools: [...(options.tools ?? []), ...tools] };
  if (Array.isArray(options.allowedTools))
    widened.allowedTools = [...options.allowedTools, ...tools.map((tool) => tool?.name)];
  return widened;
}

/** The tools this run may use: all of them, or the task's least-privilege subset. */
function toolsInReach(options: Pick<RunOptions, 'tools' | 'allowedTools'>): readonly AnyTool[] {
  const tools = options.tools ?? [];
  if (options.allowedTools === undefined) return tools;
  const allowed = new Set(options.allowedTools);
  return tools.filter((tool) => allowed.has(tool.name));
}

function toolDefinitions(
  tools: readonly AnyTool[],
  options: Pick<RunOptions, 'giveUpTool'>,
): ToolDefinition[] {
  const definitions = tools.map(toolDefinitionOf);
  const giveUp = giveUpToolName(options);
  if (giveUp !== null) definitions.push(giveUpDefinition(giveUp));
  return definitions;
}

/** The built-in tool a model calls to say it cannot complete the task. */
export function giveUpDefinition(name: string): ToolDefinition {
  return {
    name,
    description:
      'Call this when the task cannot be completed with the tools available (missing access, missing data, or an impossible request). Say why in `reason`. Prefer this to guessing.',
    inputSchema: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why the task cannot be completed.' } },
      required: ['reason'],
      additionalProperties: false,
    },
  };
}

function sinksOf(trace: RunOptions['trace']): readonly TraceSink[] {
  if (trace === undefined) return [];
  const sinks = (Array.isArray(trace) ? trace : [trace]) as readonly TraceSink[];
  sinks.forEach((sink, index) => {
    if (typeof sink?.write !== 'function')
      throw new ConfigurationError(
        Array.isArray(trace) ? `trace.${index}` : 'trace',
        'must be a sink with write(event)',
      );
  });
  return sinks;
}
