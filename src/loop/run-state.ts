import type { DriftState } from '../controls/drift-monitor.js';
import type { TaintState } from '../controls/taint-ledger.js';
import { ReinsError } from '../errors/reins-error.js';
import type { Message, ToolUseBlock } from '../model/content.js';
import type { Usage } from '../model/model.js';
import type { ApprovalVerdict } from './approval.js';
import type { Outcome } from './outcome.js';

/** The run-state schema version. Old versions keep loading: add a migration, never edit a shape. */
export const runStateVersion = 1;

/**
 * Everything needed to continue a run after its last completed step, as plain JSON. The loop saves
 * one after every step; `resumeAgent(state, options)` continues from it.
 */
export interface RunState {
  version: typeof runStateVersion;
  runId: string;
  status: 'running' | 'ended';
  /** Completed steps (model call plus its tool results). */
  step: number;
  system: string;
  messages: Message[];
  /** How many of `messages` belong to completed steps; a resume drops the rest. */
  completedMessages: number;
  usage: Usage;
  billedTokens: number;
  costUsd: number;
  contextTokens: number;
  toolErrors: number;
  repeatCounts: [string, number][];
  drift: DriftState | null;
  /** Wall-clock time the run has used so far, so a resumed run keeps its `maxWallMs`. */
  elapsedMs: number;
  startedAt: number;
  updatedAt: number;
  outcome: Outcome | null;
  /** The batch waiting for approval verdicts (absent in states written before approvals existed). */
  pending?: PendingBatch | null;
  taint?: TaintState | null;
  /** Keys of calls that failed terminally; they are not run again. */
  terminalFailures?: string[];
  toolStats?: Record<string, ToolStats>;
  /** Actions drafted or proposed for a person instead of performed. */
  handoffs?: Handoff[];
  /**
   * The checkpoint revision this state is at: bumped at every checkpoint, with or without a store.
   * A resume claims `revision + 1` before anything runs, so one state is continued at most once.
   * Absent in states written before revisions existed (read as 0).
   */
  revision?: number;
  /** Where this run's trace goes on: absent in states written before segments existed. */
  trace?: TraceCursor;
}

/** A run's place in its trace: the segment written last, and the `seq` the next event takes. */
export interface TraceCursor {
  segment: number;
  nextSeq: number;
}

/** A step's tool calls waiting on a person. */
export interface PendingBatch {
  step: number;
  calls: ToolUseBlock[];
  thought: string;
  /** Verdicts already given for calls of this batch: they hold across resumes until it runs. */
  verdicts?: ApprovalVerdict[];
}

/** Per-tool counts for the run summary. */
export interface ToolStats {
  calls: number;
  ok: number;
  errors: number;
  validationFailures: number;
  /** validationFailures ÷ calls that executed. */
  validationFailureRate: number;
  truncated: number;
  denied: number;
  approvalsRequested: number;
}

/** An action handed to a person instead of performed: a `draft` or a `never` proposal. */
export interface Handoff {
  kind: 'draft' | 'proposal';
  callId: string;
  tool: string;
  input: unknown;
  step: number;
  reason: string;
}

/** Parses a serialized run state, checking its version and shape. */
export function parseRunState(text: string): RunState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ReinsError('corrupt_state', 'run state is not valid JSON', { cause });
  }
  return assertRunState(value);
}

/** Checks that a value is a run state this version of reins can continue. */
export function assertRunState(value: unknown): RunState {
  if (typeof value !== 'object' || value === null)
    throw new ReinsError('corrupt_state', 'run state must be an object');
  const state = value as Partial<RunState>;
  if (state.version !== runStateVersion) {
    throw new ReinsError(
      'unsupported_state_version',
      `run state version ${String(state.version)} is not supported (expected ${runStateVersion})`,
    );
  }
  const numeric = [
    'step',
    'completedMessages',
    'billedTokens',
    'costUsd',
    'contextTokens',
    'toolErrors',
    'elapsedMs',
    'startedAt',
    'updatedAt',
  ] as const;
  for (const field of numeric) {
    if (typeof state[field] !== 'number' || !Number.isFinite(state[field])) {
      throw new ReinsError('corrupt_state', `run state field ${field} must be a finite number`);
    }
  }
  if (
    typeof state.runId !== 'string' ||
    !Array.isArray(state.messages) ||
    !Array.isArray(state.repeatCounts)
  ) {
    throw new ReinsError('corrupt_state', 'run state is missing runId, messages or repeatCounts');
  }
  if (state.status !== 'running' && state.status !== 'ended')
    throw new ReinsError('corrupt_state', 'run state status is invalid');
  return state as RunState;
}
