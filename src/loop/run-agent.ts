import { ConfigurationError } from '../errors/reins-error.js';
import type { Message } from '../model/content.js';
import { emptyUsage, type ToolDefinition } from '../model/model.js';
import { randomIds, systemClock } from '../time/clock.js';
import { approxTokenEstimator, PrefillCounter } from '../tokens/token-estimator.js';
import { type AnyTool, toolDefinitionOf } from '../tools/define-tool.js';
import type { RecordedLimits } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { liveDispatcher, scopeAuthorizer } from './dispatch.js';
import {
  defaultFinalAnswerPrompt,
  giveUpToolName,
  type RunOptions,
  validateRunOptions,
  writesDisabledFromEnvironment,
} from './options.js';
import { type RunResult, runLoop } from './run-loop.js';
import { assertRunState, type RunState, runStateVersion } from './run-state.js';

/**
 * Runs an agent to one labeled {@link Outcome}. Never throws for how a run ends (limits, budgets,
 * loops, model or tool failures, cancellation); throws {@link ConfigurationError} for invalid options.
 *
 * @example
 * import { runAgent } from 'reins';
 * import { scriptedModel } from 'reins/testing';
 * const result = await runAgent({
 *   model: scriptedModel([{ text: 'All good.' }]),
 *   input: 'Is checkout healthy?',
 *   maxSteps: 6,
 * });
 * if (result.outcome.kind === 'answered') console.log(result.outcome.text);
 */
export function runAgent(options: RunOptions): Promise<RunResult> {
  validateRunOptions(options);
  const clock = options.clock ?? systemClock;
  const generateId = options.generateId ?? randomIds;
  const runId = options.runId ?? generateId('run');
  const system = options.system ?? '';
  const messages: Message[] =
    typeof options.input === 'string'
      ? [{ role: 'user', content: [{ type: 'text', text: options.input }] }]
      : [...options.input];
  const definitions = toolDefinitions(options);
  const counter = new PrefillCounter(options.estimator ?? approxTokenEstimator);
  const now = clock.now();
  const state: RunState = {
    version: runStateVersion,
    runId,
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
  return runLoop(setupFor(options, state, definitions, counter, runId, false));
}

/** Outcomes a resume continues past: the run was interrupted, not decided. */
const resumableOutcomes: ReadonlySet<string> = new Set(['hard_error', 'cancelled']);

/**
 * Continues a run from its last completed step. Pass the same tools and limits as the original run;
 * the conversation, counters and budgets come from the state. Steps that completed are never
 * repeated, so their tool calls never run again. A run that ended `hard_error` or `cancelled`
 * continues from its last completed step; one that ended `awaiting_approval` runs its paused batch
 * with the verdicts in `options.approvals`; any other ended run returns its outcome at once.
 * Throws {@link ConfigurationError} for invalid options and a `ReinsError` for a corrupt state.
 */
export function resumeAgent(
  state: RunState,
  options: Omit<RunOptions, 'input' | 'runId' | 'system'>,
): Promise<RunResult> {
  let checked = assertRunState(state);
  validateRunOptions({ ...options, input: checked.messages });
  const definitions = toolDefinitions(options);
  const counter = new PrefillCounter(options.estimator ?? approxTokenEstimator);
  if (checked.status === 'ended' && checked.outcome && resumableOutcomes.has(checked.outcome.kind)) {
    const messages = checked.messages.slice(0, checked.completedMessages);
    const contextTokens = counter.request({ system: checked.system, tools: definitions, messages });
    checked = { ...checked, status: 'running', outcome: null, messages, contextTokens, pending: null };
  } else if (checked.status === 'ended' && checked.outcome?.kind === 'awaiting_approval' && checked.pending) {
    // The pending batch runs with the verdicts in `options.approvals`; calls without one stay paused.
    checked = { ...checked, status: 'running', outcome: null };
  }
  return runLoop(
    setupFor({ ...options, input: checked.messages }, checked, definitions, counter, checked.runId, true),
  );
}

function setupFor(
  options: RunOptions,
  state: RunState,
  definitions: ToolDefinition[],
  counter: PrefillCounter,
  runId: string,
  resumed: boolean,
) {
  const clock = options.clock ?? systemClock;
  const tools = new Map<string, AnyTool>(toolsInReach(options).map((tool) => [tool.name, tool]));
  return {
    runId,
    model: options.model,
    dispatcher: liveDispatcher({
      tools,
      actor: options.actor,
      authorize: options.authorize ?? scopeAuthorizer,
      clock,
      runId,
      toolTimeoutMs: options.toolTimeoutMs ?? 30_000,
      maxResultTokens: options.maxResultTokens,
      maxInputChars: options.maxInputChars ?? 262_144,
      writesDisabled: options.writesDisabled ?? writesDisabledFromEnvironment(),
      taint: {
        enabled: options.taint?.enabled ?? true,
        onTaintedCall: options.taint?.onTaintedCall ?? 'ask',
        allowWhileTainted: options.taint?.allowWhileTainted ?? [],
      },
      estimator: counter.estimator,
    }),
    toolDefinitions: definitions,
    limits: resolveLimits(options, counter.estimator.name),
    counter,
    clock,
    sinks: sinksOf(options.trace),
    checkpoint: options.checkpoint,
    signal: options.signal,
    prices: options.prices,
    worldState: options.worldState,
    actorId: options.actor?.id ?? null,
    state,
    resumed,
    approvals: options.approvals,
    accountSpend: options.accountSpend,
  };
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

/** The tools this run may use: all of them, or the task's least-privilege subset. */
function toolsInReach(options: Pick<RunOptions, 'tools' | 'allowedTools'>): readonly AnyTool[] {
  const tools = options.tools ?? [];
  if (options.allowedTools === undefined) return tools;
  const allowed = new Set(options.allowedTools);
  return tools.filter((tool) => allowed.has(tool.name));
}

function toolDefinitions(
  options: Pick<RunOptions, 'tools' | 'giveUpTool' | 'allowedTools'>,
): ToolDefinition[] {
  const definitions = toolsInReach(options).map(toolDefinitionOf);
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
  if (Array.isArray(trace)) return trace;
  if (typeof (trace as TraceSink).write !== 'function')
    throw new ConfigurationError('trace', 'must be a sink with write(event)');
  return [trace as TraceSink];
}
