import type { JobBudgetName } from '../budget/job-budget.js';
import type { ErrorInfo } from '../errors/error-info.js';

/** One problem with a model stage's output, as its schema reported it. */
export interface OutputIssue {
  /** Dotted path into the output, `(output)` for the whole of it. */
  path: string;
  message: string;
}

/**
 * Why a stage (and so its pipeline) did not produce an output. Every variant names the stage, by
 * its path (`nightly/summarize`, `migrate/files[3]/rewrite`).
 */
export type StageFailure =
  /** The model's answer did not parse or did not match the stage's schema. Nothing after it ran. */
  | { kind: 'invalid_output'; stage: string; issues: OutputIssue[]; text: string }
  /** The model stopped at `maxOutputTokens`: a bounded call that did not fit its bound. */
  | { kind: 'truncated'; stage: string; text: string }
  /** The model declined. */
  | { kind: 'refused'; stage: string; text: string }
  /** The model threw or rejected. */
  | { kind: 'model_error'; stage: string; error: ErrorInfo }
  /** A function stage threw. */
  | { kind: 'stage_error'; stage: string; error: ErrorInfo }
  /** The job's budget could not afford the call; `spender` is who found it exhausted. */
  | {
      kind: 'over_budget';
      stage: string;
      budget: JobBudgetName;
      limit: number;
      actual: number;
      spender: string;
      unpriced?: string;
    }
  /** The stage ran past its time (a fan-out branch's `branchTimeoutMs`). */
  | { kind: 'timed_out'; stage: string; timeoutMs: number }
  /** The pipeline's signal aborted. */
  | { kind: 'cancelled'; stage: string; reason: string }
  /** A fan-in had fewer successful branches than it needs; each failed branch is listed, labeled. */
  | {
      kind: 'insufficient_branches';
      stage: string;
      succeeded: number;
      required: number;
      failed: { index: number; failure: StageFailure }[];
    };

/**
 * How a pipeline ended: its output, a stage's failure, or nothing run because the checkpoint had
 * moved on (a second resume of the same run). Switch on `kind`.
 */
export type PipelineOutcome<Output> =
  | { kind: 'completed'; output: Output }
  | StageFailure
  | { kind: 'stale_state'; revision: number; currentRevision: number };

/** Every pipeline outcome kind, for exhaustive checks and dashboards. */
export const pipelineOutcomeKinds = [
  'completed',
  'invalid_output',
  'truncated',
  'refused',
  'model_error',
  'stage_error',
  'over_budget',
  'timed_out',
  'cancelled',
  'insufficient_branches',
  'stale_state',
] as const satisfies readonly PipelineOutcome<unknown>['kind'][];

/** A one-line description of a pipeline outcome, for logs and the CLI. */
export function describePipelineOutcome(outcome: PipelineOutcome<unknown>): string {
  switch (outcome.kind) {
    case 'completed':
      return 'completed';
    case 'invalid_output':
      return `invalid_output at ${outcome.stage}: ${outcome.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`;
    case 'truncated':
      return `truncated at ${outcome.stage}: the answer hit maxOutputTokens`;
    case 'refused':
      return `refused at ${outcome.stage}`;
    case 'model_error':
      return `model_error at ${outcome.stage}: ${outcome.error.name}: ${outcome.error.message}`;
    case 'stage_error':
      return `stage_error at ${outcome.stage}: ${outcome.error.name}: ${outcome.error.message}`;
    case 'over_budget':
      return outcome.unpriced !== undefined
        ? `over_budget at ${outcome.stage}: ${outcome.budget} cannot be enforced: no price for model "${outcome.unpriced}" (spender ${outcome.spender})`
        : `over_budget at ${outcome.stage}: ${outcome.budget} ${outcome.actual} > limit ${outcome.limit} (spender ${outcome.spender})`;
    case 'timed_out':
      return `timed_out at ${outcome.stage} after ${outcome.timeoutMs} ms`;
    case 'cancelled':
      return `cancelled at ${outcome.stage}: ${outcome.reason}`;
    case 'insufficient_branches':
      return `insufficient_branches at ${outcome.stage}: ${outcome.succeeded} of ${outcome.required} required branches succeeded`;
    case 'stale_state':
      return `stale_state: revision ${outcome.revision} was already resumed; the stage store is at ${outcome.currentRevision}; nothing ran`;
  }
}
