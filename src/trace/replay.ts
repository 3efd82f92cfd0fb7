import type { JobBudget, JobBudgetExceeded } from '../budget/job-budget.js';
import type { ContextEdit } from '../context/context-edit.js';
import type { ContextPolicy } from '../context/context-policy.js';
import { canonicalJson } from '../controls/canonical-json.js';
import type { ErrorInfo } from '../errors/error-info.js';
import { errorInfo } from '../errors/error-info.js';
import { isReinsError, ReinsError } from '../errors/reins-error.js';
import type { ApprovalVerdict } from '../loop/approval.js';
import type { CallSettlement, Dispatcher } from '../loop/call-plan.js';
import type { PrepareStep } from '../loop/options.js';
import type { Outcome } from '../loop/outcome.js';
import { runLoop } from '../loop/run-loop.js';
import type { RunResult } from '../loop/run-result.js';
import { assertRunState, type RunState, runStateVersion } from '../loop/run-state.js';
import { emptyUsage, type Model, type ModelResponse, type Usage } from '../model/model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';
import type {
  ApprovalRequestEvent,
  ModelErrorEvent,
  ModelResponseEvent,
  RunEndEvent,
  RunStartEvent,
  StepPrepareEvent,
  ToolResultEvent,
  TraceEvent,
  TraceEventBody,
} from './events.js';
import { memoryTraceSink } from './sink.js';
import { splitTrace } from './split-trace.js';

export interface ReplayOptions {
  /** The estimator the original run used, when it was not the default. */
  estimator?: TokenEstimator;
  /** Which run to replay when the trace holds several (a JSONL file appended to by many runs). */
  runId?: string;
}

/** What a replay produced, beside what the trace recorded. */
export interface ReplayResult {
  outcome: Outcome;
  /** The outcome the trace recorded, if the run got as far as recording one. */
  recorded: Outcome | undefined;
  /** The replayed outcome is the recorded one, field for field. */
  matches: boolean;
  /** Where the replay needed something the trace did not hold. */
  divergences: string[];
  /**
   * Where the trace breaks its own contract: a `seq` skipped, repeated or out of order, a recorded
   * result naming another tool than the call, or answering no call. Any of these and `matches` is false.
   */
  problems: string[];
  /** The replayed run's own trace. */
  trace: TraceEvent[];
  result: RunResult;
  /** Each segment of the run (a fresh start, then one per resume), replayed on its own. */
  segments: SegmentReplay[];
}

/** One segment's replay. A segment cut off by a crash has no recorded outcome and is not replayed. */
export interface SegmentReplay {
  segment: number;
  recorded: Outcome | undefined;
  outcome: Outcome | undefined;
  matches: boolean;
  divergences: string[];
  problems: string[];
}

/**
 * Re-runs a run from its trace, segment by segment (a resumed run's trace holds one segment per
 * continuation): the recorded model responses and tool results stand in for the model and the
 * tools, while the limits, counters, repeat detection and budgets run for real. `matches` holds when
 * every finished segment reproduces its recorded outcome and the trace keeps its contract (each
 * recorded result names the call's tool and id; `seq` runs on without a gap or a repeat).
 */
export async function replayTrace(
  events: readonly TraceEvent[],
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  if (!Array.isArray(events)) throw new ReinsError('invalid_trace', 'a trace is an array of events');
  events.forEach((event, index) => {
    const typed = event as Partial<TraceEvent> | null;
    if (
      typeof typed !== 'object' ||
      typed === null ||
      typeof typed.type !== 'string' ||
      typeof typed.runId !== 'string' ||
      typeof typed.seq !== 'number'
    )
      throw new ReinsError(
        'invalid_trace',
        `trace event ${index} is not an event (an object with type, runId and seq)`,
      );
  });
  try {
    return await replayRun(events, options);
  } catch (thrown) {
    if (isReinsError(thrown)) throw thrown;
    // A trace that passed the shape check but holds garbage inside (a run-start without limits, a
    // resumedFrom that is no state): a labeled error, never a TypeError.
    throw new ReinsError('invalid_trace', `the trace cannot be replayed: ${errorInfo(thrown).message}`, {
      cause: thrown,
    });
  }
}

async function replayRun(events: readonly TraceEvent[], options: ReplayOptions): Promise<ReplayResult> {
  const runs = splitTrace(events);
  if (runs.length === 0) throw new ReinsError('invalid_trace', 'the trace has no run-start event');
  const run = options.runId === undefined ? runs[0] : runs.find((entry) => entry.runId === options.runId);
  if (!run) throw new ReinsError('invalid_trace', `the trace holds no run ${options.runId}`);
  if (options.runId === undefined && runs.length > 1)
    throw new ReinsError(
      'ambiguous_trace',
      `the trace holds ${runs.length} runs (${runs.map((entry) => entry.runId).join(', ')}); pass runId to pick one`,
    );
  if (run.segments.length === 0) throw new ReinsError('invalid_trace', 'the trace has no run-start event');
  const segments: SegmentReplay[] = [];
  let last: ReplayResult | undefined;
  for (const segment of run.segments) {
    if (!segment.ended && segment !== run.segments[run.segments.length - 1]) {
      segments.push({
        segment: segment.segment,
        recorded: undefined,
        outcome: undefined,
        matches: true,
        divergences: ['cut off (no run-end): continued by the next segment'],
        problems: [],
      });
      continue;
    }
    last = await replaySegment(segment.events, options);
    segments.push({
      segment: segment.segment,
      recorded: last.recorded,
      outcome: last.outcome,
      matches: last.matches,
      divergences: last.divergences,
      problems: last.problems,
    });
  }
  const replay = last as ReplayResult;
  const problems = [...run.problems, ...segments.flatMap((entry) => entry.problems)];
  return {
    ...replay,
    divergences: segments.flatMap((entry) => entry.divergences),
    problems,
    matches: problems.length === 0 && segments.every((entry) => entry.matches),
    segments,
  };
}

/** Replays one segment: its run-start (fresh or resumed from a state) and the events after it. */
async function replaySegment(events: readonly TraceEvent[], options: ReplayOptions): Promise<ReplayResult> {
  const start = events.find((event): event is RunStartEvent => event.type === 'run-start');
  if (!start) throw new ReinsError('invalid_trace', 'the trace has no run-start event');
  if (start.v !== 1)
    throw new ReinsError('unsupported_trace_version', `trace version ${String(start.v)} is not supported`);
  const end = events.find((event): event is RunEndEvent => event.type === 'run-end');
  const divergences: string[] = [];
  const estimator = options.estimator ?? approxTokenEstimator;
  if (start.limits.estimator !== estimator.name) {
    divergences.push(
      `the run used estimator "${start.limits.estimator}", the replay "${estimator.name}": pre-call estimates may differ`,
    );
  }

  const clock = fakeClock(start.at);
  const advanceTo = (at: number) => {
    if (at > clock.now()) clock.advance(at - clock.now());
  };
  const stop = new AbortController();
  const interrupted =
    end &&
    (end.outcome.kind === 'cancelled' ||
      (end.outcome.kind === 'over_budget' && end.outcome.phase === 'during-call'));
  // With nothing recorded for this point, the original run was interrupted here: interrupt again.
  const interrupt = async (what: string): Promise<never> => {
    if (!interrupted || !end) {
      divergences.push(`no recorded ${what}`);
      throw new ReinsError('replay_diverged', `the trace holds no recorded ${what}`);
    }
    advanceTo(end.at);
    if (end.outcome.kind === 'cancelled') stop.abort(end.outcome.reason);
    return new Promise<never>(() => {});
  };

  const responses = events.filter(
    (event): event is ModelResponseEvent | ModelErrorEvent =>
      event.type === 'model-response' || event.type === 'model-error',
  );
  let nextResponse = 0;
  const model: Model = {
    name: start.model,
    async generate() {
      const recorded = responses[nextResponse++];
      if (!recorded) return interrupt(`model response for call ${nextResponse}`);
      advanceTo(recorded.at);
      if (recorded.type === 'model-error') {
        if (recorded.error.name === 'MalformedResponse') return recorded.response as ModelResponse;
        throw errorFromInfo(recorded.error);
      }
      return recorded.response;
    },
  };

  const results = new Map<string, ToolResultEvent>();
  const approvals = new Map<string, ApprovalRequestEvent>();
  const recordedPlanEvents = new Map<string, TraceEvent[]>();
  const worldStates = new Map<number, string>();
  for (const event of events) {
    if (event.type === 'tool-result') results.set(event.callId, event);
    else if (event.type === 'approval-request') approvals.set(event.request.callId, event);
    else if (event.type === 'authorization' || event.type === 'taint-check' || event.type === 'tool-call') {
      const list = recordedPlanEvents.get(event.callId) ?? [];
      list.push(event);
      recordedPlanEvents.set(event.callId, list);
    } else if (event.type === 'progress-check' && event.worldState !== null)
      worldStates.set(event.step, event.worldState);
  }
  const integrity: string[] = [];
  const calledIds = new Set<string>();
  const dispatcher: Dispatcher = {
    async plan({ call }, emit) {
      calledIds.add(call.id);
      for (const recorded of recordedPlanEvents.get(call.id) ?? []) {
        const { v: _v, runId: _r, seq: _s, at: _a, ...body } = recorded;
        await emit(body as TraceEventBody);
      }
      const result = results.get(call.id);
      if (result && result.tool !== call.name)
        integrity.push(
          `the recorded result for call ${call.id} names tool ${result.tool}, the call ${call.name}`,
        );
      if (result) {
        advanceTo(result.at);
        const settlement: CallSettlement = {
          status: result.status,
          content: result.content,
          isError: result.isError,
          error: result.error,
          fatal: result.status === 'fatal',
          untrusted: result.untrusted === true,
          trustedValues: result.trustedValues ?? [],
        };
        if (result.truncation) settlement.truncation = result.truncation;
        if (result.attachments) settlement.attachments = result.attachments;
        if (result.failure) settlement.failure = result.failure;
        return { kind: 'settled', settlement };
      }
      const approval = approvals.get(call.id);
      if (approval) {
        const { approvalId: _id, reason: _reason, ...request } = approval.request;
        return { kind: 'approval', request };
      }
      // Nothing recorded, and the run ended because a check of this call threw: throw again.
      if (end?.outcome.kind === 'hard_error' && planFailures.has(end.outcome.source))
        return { kind: 'failed', source: end.outcome.source, error: end.outcome.error };
      // Nothing recorded: the original run was interrupted while this call ran.
      return {
        kind: 'execute',
        execute: async (runtime) => {
          const what = `result for tool call ${call.id} (${call.name})`;
          if (!interrupted || !end) {
            divergences.push(`no recorded ${what}`);
            const error = { name: 'ReplayDiverged', message: `the trace holds no recorded ${what}` };
            return { status: 'fatal', content: error.message, isError: true, error, fatal: true };
          }
          advanceTo(end.at);
          if (end.outcome.kind === 'cancelled') stop.abort(end.outcome.reason);
          await new Promise<void>((resolve) => {
            if (runtime.aborted) resolve();
            else runtime.onAbort(resolve);
          });
          return { status: 'aborted', content: '', isError: true, error: null, fatal: false };
        },
      };
    },
  };

  const counter = new PrefillCounter(estimator);
  const state: RunState = start.resumedFrom
    ? assertRunState(start.resumedFrom)
    : {
        version: runStateVersion,
        runId: start.runId,
        status: 'running',
        step: 0,
        system: start.system,
        messages: start.messages,
        completedMessages: start.messages.length,
        usage: emptyUsage(),
        billedTokens: 0,
        costUsd: 0,
        contextTokens: counter.request({
          system: start.system,
          tools: start.tools,
          messages: start.messages,
        }),
        toolErrors: 0,
        repeatCounts: [],
        drift: null,
        elapsedMs: 0,
        startedAt: start.at,
        updatedAt: start.at,
        outcome: null,
      };
  const sink = memoryTraceSink();
  const result = await clock.runUntilSettled(
    runLoop({
      runId: start.runId,
      model,
      dispatcher,
      toolDefinitions: start.tools,
      limits: start.limits,
      counter,
      clock,
      sinks: [sink],
      traceBudgetChecks: 'every',
      checkpoint: undefined,
      prepareStep: prepareFromTrace(events, model),
      context: contextFromTrace(events),
      modelSettings: start.modelSettings,
      exactlyOnce: false,
      signal: stop.signal,
      prices: (start.prices as never) ?? undefined,
      worldState: worldStates.size > 0 ? ({ step }) => worldStates.get(step) ?? '' : undefined,
      actorId: start.actorId,
      state,
      resumed: start.resumedFrom !== null,
      accountSpend: undefined,
      ...jobBudgetFromTrace(end?.outcome, responses.length),
      approvals:
        events.filter((event) => event.type === 'approval').length > 0 ? recordedVerdicts(events) : undefined,
    }),
  );
  const recorded = end?.outcome;
  for (const event of events)
    if (event.type === 'tool-result' && !calledIds.has(event.callId))
      integrity.push(
        `the recorded result for call ${event.callId} (${event.tool}) answers no call the model made`,
      );
  return {
    outcome: result.outcome,
    recorded,
    matches:
      recorded !== undefined &&
      integrity.length === 0 &&
      canonicalJson(withoutStacks(recorded)) === canonicalJson(withoutStacks(result.outcome)),
    divergences,
    problems: integrity,
    trace: sink.events,
    result,
    segments: [],
  };
}

/**
 * The recorded `step-prepare` changes, applied again at the same steps. A model switch is replayed
 * under the recorded name (prices and budgets resolve as they did), answering from the recording.
 */
function prepareFromTrace(events: readonly TraceEvent[], recorded: Model): PrepareStep | undefined {
  const byStep = new Map<number, StepPrepareEvent['changes']>();
  for (const event of events) if (event.type === 'step-prepare') byStep.set(event.step, event.changes);
  if (byStep.size === 0) return undefined;
  return ({ step }) => {
    const changes = byStep.get(step);
    if (!changes) return undefined;
    const { model: name, ...rest } = changes;
    if (name === undefined) return rest;
    return { ...rest, model: { name, generate: (request) => recorded.generate(request) } };
  };
}

/**
 * The recorded context edits, applied again at the same steps: the window each call sent is
 * rebuilt from the transcript and the edits, never from a copy of the messages.
 */
function contextFromTrace(events: readonly TraceEvent[]): ContextPolicy | undefined {
  const byStep = new Map<number, ContextEdit[]>();
  const spentAt = new Map<number, { model: string; usage: Usage }>();
  let policy: string | undefined;
  let windowed = false;
  let cacheBreakpoint = false;
  for (const event of events) {
    if (event.type === 'context-window') {
      windowed = true;
      if (event.cacheBreakpoint !== undefined) cacheBreakpoint = true;
    }
    if (event.type === 'context-spend') spentAt.set(event.step, { model: event.model, usage: event.usage });
    if (event.type !== 'context-edit') continue;
    policy ??= event.policy;
    let edits = byStep.get(event.step);
    if (!edits) {
      edits = [];
      byStep.set(event.step, edits);
    }
    edits.push(event.edit);
  }
  if (!windowed && byStep.size === 0 && spentAt.size === 0) return undefined;
  return {
    name: policy ?? 'replay',
    cacheBreakpoint,
    prepare: ({ step }) => {
      const edits = byStep.get(step);
      const spent = spentAt.get(step);
      // Each step's edits apply once: a resumed segment re-running a step does not apply them twice.
      byStep.delete(step);
      spentAt.delete(step);
      if (!edits && !spent) return undefined;
      return { ...(edits ? { edits } : {}), ...(spent ? { spent } : {}) };
    },
  };
}

/** Sources of a `hard_error` raised while a call was planned, before any result was recorded. */
const planFailures: ReadonlySet<string> = new Set(['precondition', 'schema', 'predicate']);

function recordedVerdicts(events: readonly TraceEvent[]): ApprovalVerdict[] {
  const verdicts: ApprovalVerdict[] = [];
  for (const event of events) {
    if (event.type !== 'approval' || event.decision === 'stale') continue;
    const by = event.by === null ? {} : { by: event.by };
    if (event.decision === 'deny')
      verdicts.push({ approvalId: event.approvalId, decision: 'deny', reason: event.reason ?? '', ...by });
    else if (event.decision === 'edit')
      verdicts.push({ approvalId: event.approvalId, decision: 'edit', input: event.input, ...by });
    else verdicts.push({ approvalId: event.approvalId, decision: 'approve', ...by });
  }
  return verdicts;
}

function errorFromInfo(info: ErrorInfo): Error {
  const error = new Error(
    info.message,
    info.cause ? { cause: errorFromInfo(info.cause) } : undefined,
  ) as Error & { code?: string };
  error.name = info.name;
  if (info.code !== undefined) error.code = info.code;
  if (info.stack !== undefined) error.stack = info.stack;
  return error;
}

function withoutStacks(outcome: Outcome): unknown {
  return JSON.parse(JSON.stringify(outcome, (key, value) => (key === 'stack' ? undefined : value)));
}

/**
 * A run that a job's budget stopped before a call: the budget was shared with runs outside this
 * trace, so the replay stands in one that grants every recorded call and refuses the next with the
 * recorded figures, as the live one did.
 */
function jobBudgetFromTrace(outcome: Outcome | undefined, recordedCalls: number): { jobBudget?: JobBudget } {
  if (outcome?.kind !== 'over_budget' || outcome.spender === undefined || outcome.phase !== 'before-call')
    return {};
  const exceeded: JobBudgetExceeded = {
    budget: outcome.budget as JobBudgetExceeded['budget'],
    limit: outcome.limit,
    actual: outcome.actual,
    spender: outcome.spender,
  };
  if (outcome.unpriced !== undefined) exceeded.unpriced = outcome.unpriced;
  let granted = 0;
  const stand = {
    reserve: (request: { spender: string; model: string }) =>
      granted++ < recordedCalls
        ? {
            ok: true,
            reservation: {
              spender: request.spender,
              model: request.model,
              tokens: 0,
              usd: 0,
              price: undefined,
              done: false,
            },
          }
        : { ok: false, exceeded },
    settle: () => ({ tokens: 0, usd: 0, basis: 'actual', overTokens: 0 }),
    release: () => {},
    keep: () => ({ tokens: 0, usd: 0, basis: 'kept', overTokens: 0 }),
  };
  return { jobBudget: stand as unknown as JobBudget };
}
