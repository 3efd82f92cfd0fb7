import { canonicalJson } from '../controls/canonical-json.js';
import type { ErrorInfo } from '../errors/error-info.js';
import { ReinsError } from '../errors/reins-error.js';
import type { ApprovalVerdict } from '../loop/approval.js';
import type { CallSettlement, Dispatcher } from '../loop/dispatch.js';
import type { Outcome } from '../loop/outcome.js';
import { type RunResult, runLoop } from '../loop/run-loop.js';
import { type RunState, runStateVersion } from '../loop/run-state.js';
import { emptyUsage, type Model, type ModelResponse } from '../model/model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';
import type {
  ApprovalRequestEvent,
  ModelErrorEvent,
  ModelResponseEvent,
  RunEndEvent,
  RunStartEvent,
  ToolResultEvent,
  TraceEvent,
  TraceEventBody,
} from './events.js';
import { memoryTraceSink } from './sink.js';

export interface ReplayOptions {
  /** The estimator the original run used, when it was not the default. */
  estimator?: TokenEstimator;
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
  /** The replayed run's own trace. */
  trace: TraceEvent[];
  result: RunResult;
}

/**
 * Re-runs the loop from a trace: the recorded model responses and tool results stand in for the
 * model and the tools, while the limits, counters, repeat detection and budgets run for real. The
 * outcome of a faithful trace comes out the same; reproducing a failure is a file read.
 */
export async function replayTrace(
  events: readonly TraceEvent[],
  options: ReplayOptions = {},
): Promise<ReplayResult> {
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
  const dispatcher: Dispatcher = {
    async plan({ call }, emit) {
      for (const recorded of recordedPlanEvents.get(call.id) ?? []) {
        const { v: _v, runId: _r, seq: _s, at: _a, ...body } = recorded;
        await emit(body as TraceEventBody);
      }
      const result = results.get(call.id);
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
        return { kind: 'settled', settlement };
      }
      const approval = approvals.get(call.id);
      if (approval) {
        const { approvalId: _id, reason: _reason, ...request } = approval.request;
        return { kind: 'approval', request };
      }
      // Nothing recorded: the original run was interrupted while this call ran.
      return {
        kind: 'execute',
        execute: async (signal) => {
          const what = `result for tool call ${call.id} (${call.name})`;
          if (!interrupted || !end) {
            divergences.push(`no recorded ${what}`);
            const error = { name: 'ReplayDiverged', message: `the trace holds no recorded ${what}` };
            return { status: 'fatal', content: error.message, isError: true, error, fatal: true };
          }
          advanceTo(end.at);
          if (end.outcome.kind === 'cancelled') stop.abort(end.outcome.reason);
          await new Promise<void>((resolve) => {
            if (signal.aborted) resolve();
            else signal.addEventListener('abort', () => resolve(), { once: true });
          });
          return { status: 'aborted', content: '', isError: true, error: null, fatal: false };
        },
      };
    },
  };

  const counter = new PrefillCounter(estimator);
  const state: RunState = start.resumedFrom ?? {
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
    contextTokens: counter.request({ system: start.system, tools: start.tools, messages: start.messages }),
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
      checkpoint: undefined,
      signal: stop.signal,
      prices: (start.prices as never) ?? undefined,
      worldState: worldStates.size > 0 ? ({ step }) => worldStates.get(step) ?? '' : undefined,
      actorId: start.actorId,
      state,
      resumed: start.resumedFrom !== null,
      accountSpend: undefined,
      approvals:
        events.filter((event) => event.type === 'approval').length > 0 ? recordedVerdicts(events) : undefined,
    }),
  );
  const recorded = end?.outcome;
  return {
    outcome: result.outcome,
    recorded,
    matches:
      recorded !== undefined &&
      canonicalJson(withoutStacks(recorded)) === canonicalJson(withoutStacks(result.outcome)),
    divergences,
    trace: sink.events,
    result,
  };
}

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
