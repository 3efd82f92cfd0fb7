import type { AnyCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { DriftMonitor, type DriftVerdict } from '../controls/drift-monitor.js';
import { costUsdOf, type PriceTable, priceFor } from '../controls/price.js';
import { RepeatDetector } from '../controls/repeat-detector.js';
import { TaintLedger } from '../controls/taint-ledger.js';
import { errorInfo } from '../errors/error-info.js';
import {
  type AssistantMessage,
  type Message,
  type ToolUseBlock,
  textOf,
  toolCallsOf,
  type UserMessage,
} from '../model/content.js';
import { addUsage, type Model, type ModelResponse, type ToolDefinition, type Usage } from '../model/model.js';
import type { SpendLimiter } from '../resilience/spend-limiter.js';
import type { Clock } from '../time/clock.js';
import type { PrefillCounter } from '../tokens/token-estimator.js';
import {
  type BudgetReading,
  type RecordedLimits,
  type TraceEvent,
  type TraceEventBody,
  traceVersion,
} from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { abortCauseOf, linkedController, raceAbort } from './abort.js';
import { type ApprovalRequest, type ApprovalVerdict, approvalIdFor } from './approval.js';
import { type CallPlan, type CallSettlement, callKey, type Dispatcher } from './dispatch.js';
import { mapConcurrent } from './map-concurrent.js';
import type { WorldStateContext } from './options.js';
import type { BudgetPhase, Outcome, UnexecutedCall } from './outcome.js';
import {
  type Handoff,
  type PendingBatch,
  type RunState,
  runStateVersion,
  type ToolStats,
} from './run-state.js';

/** What a finished run hands back. */
export interface RunResult {
  runId: string;
  outcome: Outcome;
  /** Model calls made. */
  steps: number;
  /** The prefill the next call would have sent. */
  contextTokens: number;
  /** Prefill plus output tokens, summed over every call: what the bill is made of. */
  billedTokens: number;
  costUsd: number;
  usage: Usage;
  toolErrors: number;
  messages: Message[];
  /** The final state; `status: 'ended'` with the outcome. */
  state: RunState;
  /** Per tool: calls, errors, validation failures and their rate, truncations, denials, approvals asked. */
  toolStats: Record<string, ToolStats>;
  /** Actions drafted or proposed for a person instead of performed. */
  handoffs: Handoff[];
}

/** Everything the loop needs, already validated and resolved. Live runs and replays both build one. */
export interface LoopSetup {
  runId: string;
  model: Model;
  dispatcher: Dispatcher;
  toolDefinitions: ToolDefinition[];
  limits: RecordedLimits;
  counter: PrefillCounter;
  clock: Clock;
  sinks: readonly TraceSink[];
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
}

class SinkFailure extends Error {}
class CheckpointFailure extends Error {}

/** The loop: think, act, observe, with every control checked by code, not by the model. */
export async function runLoop(setup: LoopSetup): Promise<RunResult> {
  const { limits, clock, counter, model, runId } = setup;
  const initial = setup.state;
  const messages: Message[] = [...initial.messages];
  let usage: Usage = { ...initial.usage };
  let billedTokens = initial.billedTokens;
  let costUsd = initial.costUsd;
  let contextTokens = initial.contextTokens;
  let toolErrors = initial.toolErrors;
  let completedSteps = initial.step;
  let completedMessages = initial.completedMessages;
  let lastStep = initial.step;
  let lastModelId: string | undefined;
  const startedAt = clock.now() - initial.elapsedMs;
  const taint = new TaintLedger(initial.taint ?? undefined);
  if (initial.system !== '') taint.noteTrustedText(initial.system);
  for (const message of initial.messages) {
    if (message.role !== 'user') continue;
    for (const block of message.content) if (block.type === 'text') taint.noteTrustedText(block.text);
  }
  const terminal = new Set<string>(initial.terminalFailures ?? []);
  const toolStats: Record<string, ToolStats> = structuredClone(initial.toolStats ?? {});
  const handoffs: Handoff[] = [...(initial.handoffs ?? [])];
  let pending: PendingBatch | null = initial.pending ?? null;
  const repeats =
    limits.repeatLimit === null ? undefined : new RepeatDetector(limits.repeatLimit, initial.repeatCounts);
  const drift =
    limits.drift === null ? undefined : new DriftMonitor(limits.drift, initial.drift ?? undefined);

  let seq = 0;
  let sinkBroken = false;
  const emit = async (body: TraceEventBody): Promise<void> => {
    if (setup.sinks.length === 0 || sinkBroken) return;
    const event = { v: traceVersion, runId, seq: seq++, at: clock.now(), ...body } as TraceEvent;
    for (const sink of setup.sinks) {
      try {
        await sink.write(event);
      } catch (thrown) {
        sinkBroken = true;
        throw new SinkFailure('trace sink failed', { cause: thrown });
      }
    }
  };

  const { controller: run, dispose: unlink } = linkedController(setup.signal);
  const wallTimer =
    limits.maxWallMs === null
      ? undefined
      : clock.setTimeout(
          () => run.abort({ type: 'wall_clock' }),
          Math.max(0, limits.maxWallMs - initial.elapsedMs),
        );

  const snapshot = (status: RunState['status'], outcome: Outcome | null): RunState => ({
    version: runStateVersion,
    runId,
    status,
    step: completedSteps,
    system: initial.system,
    messages,
    completedMessages,
    usage,
    billedTokens,
    costUsd,
    contextTokens,
    toolErrors,
    repeatCounts: repeats ? repeats.entries() : [],
    drift: drift ? drift.state() : null,
    elapsedMs: clock.now() - startedAt,
    startedAt: initial.startedAt,
    updatedAt: clock.now(),
    outcome,
    pending,
    taint: taint.state(),
    terminalFailures: [...terminal],
    toolStats,
    handoffs,
  });

  // Snapshots copy counters; take one only when a store will keep it.
  const saveStep = async (): Promise<void> => {
    if (setup.checkpoint) await save(snapshot('running', null));
  };

  const save = async (state: RunState): Promise<void> => {
    if (!setup.checkpoint) return;
    try {
      await (setup.checkpoint as { save(state: RunState): unknown }).save(state);
    } catch (thrown) {
      throw new CheckpointFailure('checkpoint save failed', { cause: thrown });
    }
  };

  const finish = async (outcome: Outcome): Promise<RunResult> => {
    if (wallTimer !== undefined) clock.clearTimeout(wallTimer);
    unlink();
    const state = snapshot('ended', outcome);
    try {
      await emit({ type: 'run-end', outcome, steps: lastStep, contextTokens, billedTokens, costUsd, usage });
    } catch {
      // The run already has its outcome; a sink that fails on the last event cannot change it.
    }
    try {
      await save(state);
    } catch {
      // Likewise: an ended run whose final checkpoint fails resumes into the same final step.
    }
    for (const sink of setup.sinks) {
      try {
        await sink.flush?.();
      } catch {
        // Reported through the outcome when it happened mid-run; nothing to add at the end.
      }
    }
    return {
      runId,
      outcome,
      steps: lastStep,
      contextTokens,
      billedTokens,
      costUsd,
      usage,
      toolErrors,
      messages,
      state,
      toolStats,
      handoffs,
    };
  };

  const abortOutcome = (phase: BudgetPhase): Outcome => {
    const cause = abortCauseOf(run.signal);
    if (cause.type === 'wall_clock' && limits.maxWallMs !== null) {
      return {
        kind: 'over_budget',
        budget: 'wall_ms',
        limit: limits.maxWallMs,
        actual: clock.now() - startedAt,
        phase,
      };
    }
    return { kind: 'cancelled', reason: cause.type === 'cancelled' ? cause.reason : cause.type };
  };

  const checkBudgets = async (
    phase: BudgetPhase,
    step: number,
    nextPrefill: number,
  ): Promise<Outcome | undefined> => {
    const readings: BudgetReading[] = [];
    const read = (budget: BudgetReading['budget'], limit: number | null, actual: number) => {
      if (limit !== null) readings.push({ budget, limit, actual, ok: actual <= limit });
    };
    read('context_tokens', limits.maxContextTokens, nextPrefill);
    read('billed_tokens', limits.maxBilledTokens, billedTokens + nextPrefill);
    if (limits.maxSpendUsd !== null) {
      const price = setup.prices ? priceFor(setup.prices, lastModelId ?? model.name) : undefined;
      const projected = price ? (nextPrefill * price.inputUsdPerMillionTokens) / 1_000_000 : 0;
      read('spend_usd', limits.maxSpendUsd, costUsd + projected);
    }
    if (setup.accountSpend && phase === 'before-call') {
      const { limiter, accountId, limitUsd } = setup.accountSpend;
      const price = setup.prices ? priceFor(setup.prices, lastModelId ?? model.name) : undefined;
      const projected = price ? (nextPrefill * price.inputUsdPerMillionTokens) / 1_000_000 : 0;
      read('account_spend_usd', limitUsd, (await limiter.spent(accountId)) + projected);
    }
    if (limits.maxWallMs !== null) {
      const elapsed = clock.now() - startedAt;
      readings.push({
        budget: 'wall_ms',
        limit: limits.maxWallMs,
        actual: elapsed,
        ok: elapsed < limits.maxWallMs,
      });
    }
    if (readings.length === 0) return undefined;
    const failed = readings.find((reading) => !reading.ok);
    await emit({ type: 'budget-check', step, phase, readings, ok: failed === undefined });
    if (!failed) return undefined;
    return { kind: 'over_budget', budget: failed.budget, limit: failed.limit, actual: failed.actual, phase };
  };

  const stat = (tool: string): ToolStats => {
    let entry = toolStats[tool];
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
      toolStats[tool] = entry;
    }
    return entry;
  };

  /**
   * Plans every call of a step before any runs: a call that needs a person pauses the whole batch.
   * Then runs the batch, appends the results, and applies the after-step controls. Returns the
   * result when the run ends here.
   */
  const runBatch = async (
    step: number,
    calls: ToolUseBlock[],
    thought: string,
    verdicts: readonly ApprovalVerdict[] | undefined,
  ): Promise<RunResult | undefined> => {
    const verdictById = new Map<string, ApprovalVerdict>();
    if (verdicts) {
      const live = new Set(calls.map(approvalIdFor));
      for (const verdict of verdicts) {
        const current = live.has(verdict.approvalId);
        await emit({
          type: 'approval',
          step,
          approvalId: verdict.approvalId,
          decision: current ? verdict.decision : 'stale',
          by: verdict.by ?? null,
          reason: verdict.decision === 'deny' ? verdict.reason : null,
          ...(verdict.decision === 'edit' ? { input: verdict.input } : {}),
        });
        if (current) verdictById.set(verdict.approvalId, verdict);
      }
    }
    const plans: CallPlan[] = [];
    for (const call of calls) {
      const verdict = verdictById.get(approvalIdFor(call));
      plans.push(
        await setup.dispatcher.plan({ call, step, verdict, taint, terminal, signal: run.signal }, emit),
      );
    }
    const requests: ApprovalRequest[] = [];
    plans.forEach((plan, index) => {
      if (plan.kind === 'approval')
        requests.push({
          ...plan.request,
          approvalId: approvalIdFor(calls[index] as ToolUseBlock),
          reason: thought,
        });
    });
    if (requests.length > 0) {
      for (const request of requests) {
        stat(request.tool).approvalsRequested++;
        await emit({ type: 'approval-request', step, request });
      }
      pending = { step, calls, thought };
      return await finish({ kind: 'awaiting_approval', requests });
    }
    pending = null;

    const { controller: batch, dispose: unlinkBatch } = linkedController(run.signal);
    let fatal: CallSettlement | undefined;
    let settlements: CallSettlement[];
    try {
      settlements = await mapConcurrent(plans, limits.toolConcurrency, async (plan, index) => {
        const call = calls[index] as ToolUseBlock;
        const startedToolAt = clock.now();
        const settlement =
          plan.kind === 'settled'
            ? plan.settlement
            : await (plan as Extract<CallPlan, { kind: 'execute' }>).execute(batch.signal);
        if (settlement.fatal && !fatal) {
          fatal = settlement;
          batch.abort({ type: 'fatal_sibling', callId: call.id });
        }
        await emit({
          type: 'tool-result',
          step,
          callId: call.id,
          tool: call.name,
          status: settlement.status,
          content: settlement.content,
          isError: settlement.isError,
          resultTokens: counter.block({
            type: 'tool_result',
            toolUseId: call.id,
            content: settlement.content,
            isError: settlement.isError,
          }),
          durationMs: clock.now() - startedToolAt,
          error: settlement.error,
          ...(settlement.truncation ? { truncation: settlement.truncation } : {}),
          ...(settlement.untrusted ? { untrusted: true } : {}),
          ...(settlement.trustedValues && settlement.trustedValues.length > 0
            ? { trustedValues: settlement.trustedValues }
            : {}),
        });
        return settlement;
      });
    } finally {
      unlinkBatch();
    }
    if (run.signal.aborted) return await finish(abortOutcome('during-call'));
    if (fatal) {
      return await finish({
        kind: 'hard_error',
        source: 'tool',
        error: fatal.error ?? { name: 'ToolError', message: fatal.content },
      });
    }

    settlements.forEach((settlement, index) => {
      const call = calls[index] as ToolUseBlock;
      const stats = stat(call.name);
      stats.calls++;
      if (settlement.status === 'ok') stats.ok++;
      if (settlement.isError) stats.errors++;
      if (settlement.status === 'validation_error') stats.validationFailures++;
      if (settlement.truncation) stats.truncated++;
      if (['denied', 'denied_by_human', 'writes_disabled', 'blocked_tainted'].includes(settlement.status))
        stats.denied++;
      const executed = stats.ok + stats.validationFailures;
      stats.validationFailureRate = executed === 0 ? 0 : stats.validationFailures / executed;
      if (settlement.terminal) terminal.add(callKey(call));
      taint.noteResult(settlement.untrusted === true, settlement.trustedValues ?? []);
      if (settlement.status === 'drafted' || settlement.status === 'proposed') {
        handoffs.push({
          kind: settlement.status === 'drafted' ? 'draft' : 'proposal',
          callId: call.id,
          tool: call.name,
          input: settlement.recorded,
          step,
          reason: thought,
        });
      }
    });

    const results: UserMessage = {
      role: 'user',
      content: calls.map((call, index) => {
        const settlement = settlements[index] as CallSettlement;
        return {
          type: 'tool_result',
          toolUseId: call.id,
          content: settlement.content,
          isError: settlement.isError,
        };
      }),
    };
    messages.push(results);
    contextTokens += counter.message(results);
    toolErrors += settlements.filter((settlement) => settlement.isError).length;
    completedSteps = step;
    completedMessages = messages.length;

    let verdict: DriftVerdict | undefined;
    let worldState: string | null = null;
    if (drift && setup.worldState) {
      try {
        worldState = await setup.worldState({ step, messages });
      } catch (thrown) {
        return await finish({ kind: 'hard_error', source: 'tool', error: errorInfo(thrown) });
      }
      drift.recordWorldState(worldState);
    }
    if (drift) {
      verdict = drift.check();
      await emit({ type: 'progress-check', step, worldState, drifting: verdict ?? null });
    }
    await emit({ type: 'step-end', step, contextTokens, billedTokens, costUsd, toolErrors });
    await saveStep();

    if (verdict)
      return await finish({
        kind: 'looped',
        reason: 'no_progress',
        signal: verdict.signal,
        detail: verdict.detail,
      });
    if (limits.maxToolErrors !== null && toolErrors > limits.maxToolErrors) {
      return await finish({
        kind: 'over_budget',
        budget: 'tool_errors',
        limit: limits.maxToolErrors,
        actual: toolErrors,
        phase: 'after-results',
      });
    }
    // Checked right after the results land, so the run stops before the next expensive call.
    const afterResults = await checkBudgets('after-results', step, contextTokens);
    if (afterResults) return await finish(afterResults);
    return undefined;
  };

  try {
    await emit({
      type: 'run-start',
      model: model.name,
      system: initial.system,
      messages: setup.resumed ? [] : [...messages],
      tools: setup.toolDefinitions,
      actorId: setup.actorId,
      limits,
      prices: (setup.prices as Record<string, unknown> | undefined) ?? null,
      resumedFrom: setup.resumed ? initial : null,
    });
    if (initial.status === 'ended' && initial.outcome) return await finish(initial.outcome);
    if (initial.pending) {
      lastStep = initial.pending.step;
      const ended = await runBatch(
        initial.pending.step,
        initial.pending.calls,
        initial.pending.thought,
        setup.approvals,
      );
      if (ended) return ended;
    }

    while (true) {
      const step = completedSteps + 1;
      const final = step >= limits.maxSteps && limits.onStepLimit === 'final-answer';
      if (final) {
        const prompt: UserMessage = {
          role: 'user',
          content: [{ type: 'text', text: limits.finalAnswerPrompt }],
        };
        messages.push(prompt);
        contextTokens += counter.message(prompt);
      }

      const over = await checkBudgets('before-call', step, contextTokens);
      if (over) return await finish(over);
      if (run.signal.aborted) return await finish(abortOutcome('before-call'));

      await emit({ type: 'step-start', step, contextTokens, billedTokens, costUsd, toolsEnabled: !final });
      lastStep = step;
      const startedCallAt = clock.now();
      let response: ModelResponse;
      try {
        const request = {
          system: initial.system,
          messages,
          tools: setup.toolDefinitions,
          toolChoice: final ? ('none' as const) : ('auto' as const),
          signal: run.signal,
          ...(limits.maxOutputTokens === null ? {} : { maxOutputTokens: limits.maxOutputTokens }),
        };
        const raced = await raceAbort(
          Promise.resolve().then(() => model.generate(request)),
          run.signal,
        );
        if (raced.aborted) return await finish(abortOutcome('during-call'));
        response = raced.value;
      } catch (thrown) {
        if (run.signal.aborted) return await finish(abortOutcome('during-call'));
        const error = errorInfo(thrown);
        await emit({ type: 'model-error', step, error, durationMs: clock.now() - startedCallAt });
        return await finish({ kind: 'hard_error', source: 'model', error });
      }

      const problem = malformed(response);
      if (problem) {
        const error = { name: 'MalformedResponse', message: problem };
        await emit({
          type: 'model-error',
          step,
          error,
          response: jsonSafe(response),
          durationMs: clock.now() - startedCallAt,
        });
        return await finish({ kind: 'hard_error', source: 'malformed_response', error });
      }

      const assistant: AssistantMessage = { role: 'assistant', content: response.content };
      const reported = validUsage(response.usage);
      const callUsage: Usage = reported ?? {
        inputTokens: contextTokens,
        outputTokens: counter.message(assistant),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      };
      const prefillTokens = callUsage.inputTokens + callUsage.cacheReadTokens + callUsage.cacheWriteTokens;
      usage = addUsage(usage, callUsage);
      billedTokens += prefillTokens + callUsage.outputTokens;
      lastModelId = response.model ?? lastModelId;
      const price = setup.prices ? priceFor(setup.prices, response.model ?? model.name) : undefined;
      const callCost = price ? costUsdOf(callUsage, price) : 0;
      costUsd += callCost;
      if (setup.accountSpend && callCost > 0)
        await setup.accountSpend.limiter.add(setup.accountSpend.accountId, callCost);
      // The provider's count of what it just read is the truth; the answer joins the next prefill.
      contextTokens = prefillTokens + callUsage.outputTokens;
      messages.push(assistant);

      const calls = toolCallsOf(response.content);
      const text = textOf(response.content);
      await emit({
        type: 'model-response',
        step,
        response,
        thought: text,
        usageEstimated: reported === undefined,
        prefillTokens,
        costUsd: callCost,
        contextTokens,
        billedTokens,
        durationMs: clock.now() - startedCallAt,
      });

      if (response.stopReason === 'max_tokens' || response.stopReason === 'interrupted') {
        completedSteps = step;
        return await finish({
          kind: 'truncated',
          block: calls.length > 0 ? 'tool_use' : 'text',
          text,
          unexecutedCalls: calls.map(unexecuted),
        });
      }
      if (response.stopReason === 'refusal') {
        completedSteps = step;
        return await finish({ kind: 'refused', text });
      }
      if (response.stopReason === 'context_window_exceeded') {
        return await finish({
          kind: 'hard_error',
          source: 'model',
          error: {
            name: 'ContextWindowExceeded',
            message: `the provider refused a prefill of about ${prefillTokens} tokens`,
          },
        });
      }
      const stepLimit = (): Outcome => ({
        kind: 'step_limit',
        limit: limits.maxSteps,
        finalText: text === '' ? undefined : text,
        unexecutedCalls: calls.map(unexecuted),
      });
      if (final) {
        completedSteps = step;
        return await finish(stepLimit());
      }
      if (calls.length === 0) {
        if (response.stopReason === 'pause_turn') {
          completedSteps = step;
          completedMessages = messages.length;
          await emit({ type: 'step-end', step, contextTokens, billedTokens, costUsd, toolErrors });
          await saveStep();
          continue;
        }
        completedSteps = step;
        if (text.trim() === '') {
          return await finish({
            kind: 'hard_error',
            source: 'empty_response',
            error: {
              name: 'EmptyResponse',
              message: `the model returned no text and no tool call (stop reason ${response.stopReason})`,
            },
          });
        }
        return await finish({ kind: 'answered', text });
      }

      const giveUp =
        limits.giveUpTool === null ? undefined : calls.find((call) => call.name === limits.giveUpTool);
      if (giveUp) {
        completedSteps = step;
        const reason = (giveUp.input as { reason?: unknown } | undefined)?.reason;
        return await finish({
          kind: 'gave_up',
          reason: typeof reason === 'string' && reason !== '' ? reason : text || 'no reason given',
        });
      }
      if (step >= limits.maxSteps) {
        // onStepLimit 'stop': the calls proposed at the limit would run blind (the model never sees their results).
        completedSteps = step;
        return await finish(stepLimit());
      }

      if (repeats) {
        for (const call of calls) {
          const check = repeats.check(
            call.name,
            call.input === undefined ? { __invalidJson: call.inputText ?? '' } : call.input,
          );
          await emit({
            type: 'repeat-check',
            step,
            callId: call.id,
            tool: call.name,
            key: check.key,
            count: check.count,
            limit: repeats.limit,
            repeated: check.repeated,
          });
          if (check.repeated) {
            completedSteps = step;
            return await finish({
              kind: 'looped',
              reason: 'repeated_call',
              key: check.key,
              tool: call.name,
              input: call.input,
              count: check.count,
              limit: repeats.limit,
            });
          }
        }
      }
      if (drift) {
        for (const call of calls) drift.recordAction(call.name, call.input ?? call.inputText);
        const verdict = drift.check();
        if (verdict) {
          await emit({ type: 'progress-check', step, worldState: null, drifting: verdict });
          completedSteps = step;
          return await finish({
            kind: 'looped',
            reason: 'no_progress',
            signal: verdict.signal,
            detail: verdict.detail,
          });
        }
      }

      const ended = await runBatch(step, calls, text, undefined);
      if (ended) return ended;
    }
  } catch (thrown) {
    if (thrown instanceof SinkFailure)
      return await finish({ kind: 'hard_error', source: 'trace', error: errorInfo(thrown.cause) });
    if (thrown instanceof CheckpointFailure)
      return await finish({ kind: 'hard_error', source: 'checkpoint', error: errorInfo(thrown.cause) });
    if (wallTimer !== undefined) clock.clearTimeout(wallTimer);
    unlink();
    throw thrown;
  }
}

function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value) ?? 'null');
  } catch {
    return String(value);
  }
}

function unexecuted(call: ToolUseBlock): UnexecutedCall {
  return { callId: call.id, tool: call.name, input: call.input ?? call.inputText };
}

function validUsage(usage: Partial<Usage> | undefined): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const count = (value: unknown) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
  const inputTokens = count(usage.inputTokens);
  const outputTokens = count(usage.outputTokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  return {
    inputTokens,
    outputTokens,
    cacheReadTokens: count(usage.cacheReadTokens) ?? 0,
    cacheWriteTokens: count(usage.cacheWriteTokens) ?? 0,
  };
}

function malformed(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null) return 'the model returned no response object';
  const { content, stopReason } = response as Partial<ModelResponse>;
  if (!Array.isArray(content)) return 'response.content is not an array';
  if (typeof stopReason !== 'string') return 'response.stopReason is missing';
  for (const block of content as unknown[]) {
    const typed = block as { type?: unknown; text?: unknown; id?: unknown; name?: unknown };
    if (typed?.type === 'text' && typeof typed.text === 'string') continue;
    if (typed?.type === 'tool_use' && typeof typed.id === 'string' && typeof typed.name === 'string')
      continue;
    return `response.content holds a block the loop cannot read: ${JSON.stringify(block)?.slice(0, 200)}`;
  }
  return undefined;
}
