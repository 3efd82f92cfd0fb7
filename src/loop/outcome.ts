import type { ErrorInfo } from '../errors/error-info.js';
import type { ApprovalRequest } from './approval.js';

/** A tool call the loop did not execute, named so a person can see what was left undone. */
export interface UnexecutedCall {
  callId: string;
  tool: string;
  input: unknown;
}

/** Which budget a run ran out of. */
export type BudgetName =
  | 'context_tokens'
  | 'billed_tokens'
  | 'spend_usd'
  | 'account_spend_usd'
  | 'wall_ms'
  | 'tool_errors'
  /** The job's budget (`jobBudget`): shared with every sub-agent, stage, tool and retry of the job. */
  | 'job_tokens'
  | 'job_spend_usd'
  | 'job_wall_ms'
  | 'job_retries';

/** When a budget was checked: before a model call, or right after tool results were appended. */
export type BudgetPhase = 'before-call' | 'after-results' | 'during-call';

/**
 * How a run ended. Every run ends in exactly one of these; `runAgent` never throws for them.
 * Switch on `kind`; each variant names its cause.
 */
export type Outcome =
  /** The model answered without asking for a tool. */
  | { kind: 'answered'; text: string }
  /**
   * The step limit was reached. With `onStepLimit: 'final-answer'` the last step asked the model for
   * its best answer with tools disabled; that text is `finalText`. Calls proposed at the limit are
   * listed, never executed blind.
   */
  | { kind: 'step_limit'; limit: number; finalText: string | undefined; unexecutedCalls: UnexecutedCall[] }
  /**
   * A budget would have been exceeded by the next call (or was, by the clock). With `unpriced`, a
   * spend budget could not be enforced: no entry in `prices` resolves for that model id, so the call
   * was refused (or, priced after it answered, the run stopped) rather than counted free; `actual` is
   * the spend so far. `spender` is set for a job budget (`job_*`): who found it exhausted (a path
   * such as `pipeline:triage/stage:classify` or `agent:parent/tool:research`).
   */
  | {
      kind: 'over_budget';
      budget: BudgetName;
      limit: number;
      actual: number;
      phase: BudgetPhase;
      unpriced?: string;
      spender?: string;
    }
  /** The same `(tool, input)` was proposed `count` times: `key` is the diagnosis. */
  | {
      kind: 'looped';
      reason: 'repeated_call';
      key: string;
      tool: string;
      input: unknown;
      count: number;
      limit: number;
    }
  /** The progress detector saw no new actions, or no change in the world state. */
  | { kind: 'looped'; reason: 'no_progress'; signal: 'novelty' | 'world_state'; detail: string }
  /** The model called the built-in "cannot complete" tool. */
  | { kind: 'gave_up'; reason: string }
  /** Something failed that the loop cannot recover from. */
  | { kind: 'hard_error'; source: HardErrorSource; error: ErrorInfo }
  /** The caller's signal aborted the run. */
  | { kind: 'cancelled'; reason: string }
  /** The response was cut off (`max_tokens`, or a stream that ended early); nothing in it was executed. */
  | { kind: 'truncated'; block: 'tool_use' | 'text'; text: string; unexecutedCalls: UnexecutedCall[] }
  /** The model declined to answer (`refusal`, or OpenAI's `content_filter`). */
  | { kind: 'refused'; text: string }
  /**
   * The run paused: these calls need a person's verdict. Nothing in their batch ran. Pass verdicts
   * to `resumeAgent(result.state, { ...options, approvals })` to continue.
   */
  | { kind: 'awaiting_approval'; requests: ApprovalRequest[] }
  /**
   * Nothing ran: the state passed to `resumeAgent` was already continued (a second resume of the
   * same state, a retried webhook, a second worker), so its checkpoint revision had moved on.
   * `currentRevision` is the store's, or null when the refusal came from this process's memory of
   * resumed states (no store). Load the latest state to see how the run went.
   */
  | { kind: 'stale_state'; revision: number; currentRevision: number | null };

/** Where a `hard_error` came from. */
export type HardErrorSource =
  | 'model'
  | 'empty_response'
  | 'malformed_response'
  | 'tool'
  | 'checkpoint'
  | 'trace'
  /** A tool's `preconditions` threw (a precondition that fails returns problems instead). */
  | 'precondition'
  /** A tool's input schema threw while validating (a zod `.refine` that throws, say). */
  | 'schema'
  /** A tool's output schema or `invariants` threw. */
  | 'invariant'
  /** An `allowWhileTainted[].when` predicate threw. */
  | 'predicate'
  | 'world_state'
  | 'prepare_step'
  /** The context policy (`context`) threw or returned an edit that cannot apply. */
  | 'context_policy'
  /** The account spend limiter (`accountSpend.limiter`) threw. */
  | 'limiter'
  /** A defect in reins itself: please report it with the trace. */
  | 'internal';

/** Every outcome kind, for exhaustive checks and dashboards. */
export const outcomeKinds = [
  'answered',
  'step_limit',
  'over_budget',
  'looped',
  'gave_up',
  'hard_error',
  'cancelled',
  'truncated',
  'refused',
  'awaiting_approval',
  'stale_state',
] as const satisfies readonly Outcome['kind'][];

/** A one-line description of an outcome, for logs and the CLI. */
export function describeOutcome(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'answered':
      return 'answered';
    case 'step_limit':
      return `step_limit: stopped at ${outcome.limit} steps${outcome.unexecutedCalls.length > 0 ? `, ${outcome.unexecutedCalls.length} proposed call(s) not executed` : ''}`;
    case 'over_budget':
      if (outcome.unpriced !== undefined)
        return `over_budget: ${outcome.budget} cannot be enforced: no price for model "${outcome.unpriced}" (spent ${formatNumber(outcome.actual)} of limit ${formatNumber(outcome.limit)}, ${outcome.phase})`;
      return `over_budget: ${outcome.budget} ${formatNumber(outcome.actual)} > limit ${formatNumber(outcome.limit)} (${outcome.phase}${outcome.spender === undefined ? '' : `, spender ${outcome.spender}`})`;
    case 'looped':
      return outcome.reason === 'repeated_call'
        ? `looped: ${outcome.key} proposed ${outcome.count}× (limit ${outcome.limit})`
        : `looped: no progress (${outcome.detail})`;
    case 'gave_up':
      return `gave_up: ${outcome.reason}`;
    case 'hard_error':
      return `hard_error (${outcome.source}): ${outcome.error.name}: ${outcome.error.message}`;
    case 'cancelled':
      return `cancelled: ${outcome.reason}`;
    case 'truncated':
      return `truncated: the response was cut off (max_tokens or a dropped stream) inside a ${outcome.block === 'tool_use' ? 'tool call' : 'text answer'}; nothing executed`;
    case 'refused':
      return 'refused';
    case 'awaiting_approval':
      return `awaiting_approval: ${outcome.requests.map((request) => `${request.tool} (${request.cause})`).join(', ')}`;
    case 'stale_state':
      return `stale_state: this state (revision ${outcome.revision}) was already resumed${outcome.currentRevision === null ? '' : `; the checkpoint is at revision ${outcome.currentRevision}`}; nothing ran`;
  }
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(6);
}
