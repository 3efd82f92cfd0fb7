import type { Attributes } from '@opentelemetry/api';
import { isSilentFailure } from '../stats/silent-failure.js';
import type { TraceEvent } from '../trace/events.js';
import { genAi } from './semconv.js';

/** A control decision as a span event on the agent span. */
export interface ControlEvent {
  name: string;
  attributes: Attributes;
}

/**
 * Which control decisions become span events. `'decisive'`: those that stopped or changed something
 * (a failed budget check, a repeat over the limit, a denial, a tainted context) and every approval,
 * drift, late result, context edit and outcome. `'all'`: every check, passing ones too (four or more
 * events a step; span event limits, 128 by default in the SDK, then drop events on long runs).
 */
export type ControlEventLevel = 'decisive' | 'all';

/**
 * The span event for one of the controls' trace events, or undefined for those that have none (or
 * that `level` leaves out). The names and attribute keys are a stable schema (docs/telemetry.md):
 * added to, never renamed. Values that quote tool arguments (a repeat key) are written only with
 * `withContent`.
 */
export function controlEvent(
  event: TraceEvent,
  withContent: boolean,
  level: ControlEventLevel = 'all',
): ControlEvent | undefined {
  if (level === 'decisive' && !decisive(event)) return undefined;
  switch (event.type) {
    case 'budget-check': {
      const failing = event.readings.filter((reading) => !reading.ok);
      return {
        name: 'reins.budget_check',
        attributes: {
          'reins.step': event.step,
          'reins.budget.phase': event.phase,
          'reins.budget.ok': event.ok,
          'reins.budget.names': event.readings.map((reading) => reading.budget),
          'reins.budget.limits': event.readings.map((reading) => reading.limit),
          'reins.budget.actuals': event.readings.map((reading) => reading.actual),
          'reins.budget.exceeded': failing.map((reading) => reading.budget),
        },
      };
    }
    case 'repeat-check': {
      const attributes: Attributes = {
        'reins.step': event.step,
        [genAi.toolName]: event.tool,
        [genAi.toolCallId]: event.callId,
        'reins.repeat.count': event.count,
        'reins.repeat.limit': event.limit,
        'reins.repeat.repeated': event.repeated,
      };
      if (withContent) attributes['reins.repeat.key'] = event.key;
      return { name: 'reins.repeat_check', attributes };
    }
    case 'authorization': {
      const attributes: Attributes = {
        'reins.step': event.step,
        [genAi.toolName]: event.tool,
        [genAi.toolCallId]: event.callId,
        'reins.authorization.allowed': event.allowed,
      };
      if (event.actorId !== null) attributes['reins.actor.id'] = event.actorId;
      if (event.reason !== null) attributes['reins.authorization.reason'] = event.reason;
      return { name: 'reins.authorization', attributes };
    }
    case 'taint-check':
      return {
        name: 'reins.taint_verdict',
        attributes: {
          'reins.step': event.step,
          [genAi.toolName]: event.tool,
          [genAi.toolCallId]: event.callId,
          'reins.taint.tainted': event.tainted,
          'reins.taint.verdict': event.verdict,
          'reins.taint.untrusted_arguments': event.untrustedArguments,
        },
      };
    case 'approval-request':
      return {
        name: 'reins.approval_request',
        attributes: {
          'reins.step': event.step,
          [genAi.toolName]: event.request.tool,
          [genAi.toolCallId]: event.request.callId,
          'reins.approval.id': event.request.approvalId,
          'reins.approval.cause': event.request.cause,
        },
      };
    case 'approval': {
      const attributes: Attributes = {
        'reins.step': event.step,
        'reins.approval.id': event.approvalId,
        'reins.approval.decision': event.decision,
      };
      if (event.by !== null) attributes['reins.approval.by'] = event.by;
      if (event.reason !== null) attributes['reins.approval.reason'] = event.reason;
      return { name: 'reins.approval', attributes };
    }
    case 'progress-check':
      if (event.drifting === null) return undefined;
      return {
        name: 'reins.progress_check',
        attributes: {
          'reins.step': event.step,
          'reins.progress.signal': event.drifting.signal,
          'reins.progress.detail': event.drifting.detail,
        },
      };
    case 'tool-late-result':
      return {
        name: 'reins.tool_late_result',
        attributes: {
          'reins.step': event.step,
          [genAi.toolName]: event.tool,
          [genAi.toolCallId]: event.callId,
          'reins.tool.settled': event.settled,
          'reins.tool.after_ms': event.afterMs,
        },
      };
    case 'context-edit':
      return {
        name: 'reins.context_edit',
        attributes: {
          'reins.step': event.step,
          'reins.context.policy': event.policy,
          'reins.context.edit': event.edit.verb,
          'reins.context.tokens_before': event.tokensBefore,
          'reins.context.tokens_after': event.tokensAfter,
        },
      };
    case 'run-end':
      return { name: 'reins.outcome', attributes: outcomeAttributes(event.outcome, withContent) };
    default:
      return undefined;
  }
}

/** Whether a control's event stopped or changed something (what `'decisive'` keeps). */
export function decisive(event: TraceEvent): boolean {
  switch (event.type) {
    case 'budget-check':
      return !event.ok;
    case 'repeat-check':
      return event.repeated;
    case 'authorization':
      return !event.allowed;
    case 'taint-check':
      return event.tainted || event.verdict === 'blocked';
    default:
      return true;
  }
}

function outcomeAttributes(
  outcome: Extract<TraceEvent, { type: 'run-end' }>['outcome'],
  withContent: boolean,
): Attributes {
  const attributes: Attributes = {
    'reins.outcome.kind': outcome.kind,
    'reins.outcome.silent_failure': isSilentFailure(outcome.kind),
  };
  switch (outcome.kind) {
    case 'step_limit':
      attributes['reins.outcome.limit'] = outcome.limit;
      attributes['reins.outcome.unexecuted_calls'] = outcome.unexecutedCalls.length;
      break;
    case 'over_budget':
      attributes['reins.outcome.budget'] = outcome.budget;
      attributes['reins.outcome.limit'] = outcome.limit;
      attributes['reins.outcome.actual'] = outcome.actual;
      attributes['reins.outcome.phase'] = outcome.phase;
      break;
    case 'looped':
      attributes['reins.outcome.reason'] = outcome.reason;
      if (outcome.reason === 'repeated_call') {
        attributes[genAi.toolName] = outcome.tool;
        attributes['reins.outcome.count'] = outcome.count;
        attributes['reins.outcome.limit'] = outcome.limit;
        if (withContent) attributes['reins.outcome.key'] = outcome.key;
      } else attributes['reins.outcome.signal'] = outcome.signal;
      break;
    case 'gave_up':
      if (withContent) attributes['reins.outcome.reason'] = outcome.reason;
      break;
    case 'hard_error':
      attributes['reins.outcome.source'] = outcome.source;
      attributes[genAi.errorType] = outcome.error.name;
      break;
    case 'truncated':
      attributes['reins.outcome.block'] = outcome.block;
      break;
    case 'awaiting_approval':
      attributes['reins.outcome.requests'] = outcome.requests.length;
      break;
    default:
      break;
  }
  return attributes;
}
