import type { RunState, ToolStats, TraceCursor } from '../loop/run-state.js';
import type { Usage } from '../model/model.js';
import type { CheckpointDelta } from './checkpoint-delta.js';

// What a delta carries field by field: the fields whose value changed, written out one by one
// (a generic walk over keys costs more here than the JSON it saves).

/** The fields a delta carries whole, and leaves out when they did not change. */
export type DeltaScalars = Required<
  Pick<
    CheckpointDelta,
    | 'status'
    | 'step'
    | 'completedMessages'
    | 'billedTokens'
    | 'costUsd'
    | 'contextTokens'
    | 'toolErrors'
    | 'elapsedMs'
    | 'updatedAt'
  >
>;

/** A state's {@link DeltaScalars}. */
export function scalarsOf(state: RunState): DeltaScalars {
  return {
    status: state.status,
    step: state.step,
    completedMessages: state.completedMessages,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
    contextTokens: state.contextTokens,
    toolErrors: state.toolErrors,
    elapsedMs: state.elapsedMs,
    updatedAt: state.updatedAt,
  };
}

/** Writes into `delta` the scalars of `next` that differ from `previous`. */
export function writeScalarsSince(delta: CheckpointDelta, previous: DeltaScalars, next: DeltaScalars): void {
  if (next.status !== previous.status) delta.status = next.status;
  if (next.step !== previous.step) delta.step = next.step;
  if (next.completedMessages !== previous.completedMessages) delta.completedMessages = next.completedMessages;
  if (next.billedTokens !== previous.billedTokens) delta.billedTokens = next.billedTokens;
  if (next.costUsd !== previous.costUsd) delta.costUsd = next.costUsd;
  if (next.contextTokens !== previous.contextTokens) delta.contextTokens = next.contextTokens;
  if (next.toolErrors !== previous.toolErrors) delta.toolErrors = next.toolErrors;
  if (next.elapsedMs !== previous.elapsedMs) delta.elapsedMs = next.elapsedMs;
  if (next.updatedAt !== previous.updatedAt) delta.updatedAt = next.updatedAt;
}

/** The counts of `next` that differ from `previous`, or undefined when none does. */
export function usageSince(previous: Usage, next: Usage): Partial<Usage> | undefined {
  const out: Partial<Usage> = {};
  if (next.inputTokens !== previous.inputTokens) out.inputTokens = next.inputTokens;
  if (next.outputTokens !== previous.outputTokens) out.outputTokens = next.outputTokens;
  if (next.cacheReadTokens !== previous.cacheReadTokens) out.cacheReadTokens = next.cacheReadTokens;
  if (next.cacheWriteTokens !== previous.cacheWriteTokens) out.cacheWriteTokens = next.cacheWriteTokens;
  if (next.reasoningTokens !== undefined && next.reasoningTokens !== previous.reasoningTokens)
    out.reasoningTokens = next.reasoningTokens;
  return anyField(out) ? out : undefined;
}

/** The cursor's fields that moved, or undefined. */
export function traceSince(previous: TraceCursor, next: TraceCursor): Partial<TraceCursor> | undefined {
  if (next.segment !== previous.segment) return { segment: next.segment, nextSeq: next.nextSeq };
  return next.nextSeq !== previous.nextSeq ? { nextSeq: next.nextSeq } : undefined;
}

/** The stats of `next` that differ from `previous` (all of them for a tool new since), or undefined. */
export function statsSince(previous: ToolStats | undefined, next: ToolStats): Partial<ToolStats> | undefined {
  if (previous === undefined) return { ...next };
  const out: Partial<ToolStats> = {};
  if (next.calls !== previous.calls) out.calls = next.calls;
  if (next.ok !== previous.ok) out.ok = next.ok;
  if (next.errors !== previous.errors) out.errors = next.errors;
  if (next.validationFailures !== previous.validationFailures)
    out.validationFailures = next.validationFailures;
  if (next.validationFailureRate !== previous.validationFailureRate)
    out.validationFailureRate = next.validationFailureRate;
  if (next.truncated !== previous.truncated) out.truncated = next.truncated;
  if (next.denied !== previous.denied) out.denied = next.denied;
  if (next.approvalsRequested !== previous.approvalsRequested)
    out.approvalsRequested = next.approvalsRequested;
  return anyField(out) ? out : undefined;
}

function anyField(value: object): boolean {
  for (const _ in value) return true;
  return false;
}
