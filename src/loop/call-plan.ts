import type { TaintLedger } from '../controls/taint-ledger.js';
import type { ErrorInfo } from '../errors/error-info.js';
import type { MediaBlock, ToolUseBlock } from '../model/content.js';
import type { Truncation } from '../tools/result-size.js';
import type { ToolCallStatus, TraceEventBody } from '../trace/events.js';
import type { ApprovalRequest, ApprovalVerdict } from './approval.js';
import type { HardErrorSource } from './outcome.js';

/** How one call was settled: what the model sees, and what the trace keeps. */
export interface CallSettlement {
  status: ToolCallStatus;
  content: string;
  isError: boolean;
  error: ErrorInfo | null;
  /** A fatal tool error ends the run and aborts sibling calls. */
  fatal: boolean;
  /** The same call must not run again in this run (a terminal error, a failed output check). */
  terminal?: boolean;
  /** The content came from a source the agent does not control. */
  untrusted?: boolean;
  /** Values from the tool's trusted output fields. */
  trustedValues?: unknown[];
  /** The same values with the output path each came from (binds a value to its field's kind). */
  trustedLeaves?: { path: string; value: unknown }[];
  /** The values of a private result (`privateOutput`), for the ledger. */
  privateValues?: unknown[];
  truncation?: Truncation;
  /** Images and documents the tool returned with `withAttachments`, checked. */
  attachments?: MediaBlock[];
  /** The input a draft or proposal recorded. */
  recorded?: unknown;
  /** A user callback around the call threw (output schema, invariants): the run ends `hard_error`. */
  failure?: { source: HardErrorSource; error: ErrorInfo };
}

/**
 * What the batch runner gives each executing call. One timer and one abort listener serve the whole
 * batch; a call registers a deadline and an abort callback instead of making its own.
 */
export interface CallRuntime {
  /** The batch's signal, made on first read (most tools never read it). */
  readonly signal: AbortSignal;
  /** True once the batch was aborted (fatal sibling, cancellation, wall clock). */
  readonly aborted: boolean;
  /** Calls `onTimeout` once `ms` have passed on the run's clock, unless cancelled first. */
  deadline(ms: number, onTimeout: () => void): () => void;
  /** Calls `listener` once when the batch aborts; returns the unregister function. */
  onAbort(listener: () => void): () => void;
  /** The run's clock reading, for durations. */
  now(): number;
}

/** What to do with a call, decided before anything in its batch runs. */
export type CallPlan =
  | { kind: 'settled'; settlement: CallSettlement }
  | { kind: 'execute'; execute: (runtime: CallRuntime) => Promise<CallSettlement> }
  | { kind: 'approval'; request: Omit<ApprovalRequest, 'reason' | 'approvalId'> }
  /** A user callback threw while the call was planned: the run ends `hard_error` with this source. */
  | { kind: 'failed'; source: HardErrorSource; error: ErrorInfo }
  /** The run's signal aborted while a callback ran: the loop ends the run as the signal says. */
  | { kind: 'stopped' };

export interface PlanRequest {
  call: ToolUseBlock;
  /** `canonicalJson(call.input)`, computed once per call and shared with the repeat key. */
  canonicalInput: string;
  step: number;
  /** A person's decision on this call, when the batch resumes after an approval. */
  verdict: ApprovalVerdict | undefined;
  taint: TaintLedger;
  /** Keys (`tool:canonical-input`) of calls that failed terminally earlier in the run. */
  terminal: ReadonlySet<string>;
  /** The tools offered at this step (`prepareStep` may narrow them); a call to another is unknown. */
  offered: ReadonlySet<string> | undefined;
  /** The run's signal: user callbacks are abandoned when it aborts. */
  signal: AbortSignal;
}

export type Emit = (event: TraceEventBody) => void | Promise<void>;

/** Decides and runs tool calls. The loop uses the live dispatcher; a replay uses recorded results. */
export interface Dispatcher {
  plan(request: PlanRequest, emit: Emit): CallPlan | Promise<CallPlan>;
}
