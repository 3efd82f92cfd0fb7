import type { JobBudget } from '../../budget/job-budget.js';
import { type TaintLedger, withoutEchoes } from '../../controls/taint-ledger.js';
import { errorInfo } from '../../errors/error-info.js';
import type { MediaBlock, ToolUseBlock } from '../../model/content.js';
import { classifyError } from '../../resilience/classify-error.js';
import { splitAttachments } from '../../tools/attachments.js';
import type { AnyTool, ToolContext } from '../../tools/define-tool.js';
import { isToolError } from '../../tools/tool-error.js';
import { isThenable } from '../boundary.js';
import type { CallRuntime, CallSettlement, Emit } from '../call-plan.js';
import type { LiveDispatcherOptions } from '../dispatch.js';
import { blockProblem } from '../run-state.js';
import { CallWatch } from './call-watch.js';
import { checkOutput, type OutputCheck } from './check-output.js';
import { base, errorContent, stoppedSettlement } from './settlement.js';
import { sizedSettlement } from './size-result.js';

/** A call that passed every check, and what running it needs. */
export interface CallJob {
  tool: AnyTool;
  input: unknown;
  call: ToolUseBlock;
  step: number;
  /** The run's signal: the output checks are abandoned when it aborts. */
  signal: AbortSignal;
  emit: Emit;
  options: LiveDispatcherOptions;
  /** The run's ledger, read only if the tool asks `context.tainted`. */
  taint?: TaintLedger;
}

/**
 * Stage 8: runs the tool under its timeout and the batch's abort, both registered on the batch's
 * runtime, then the output checks (stage 9) and sizing (stage 10). Never rejects. A tool that
 * returns a plain value (not a promise) is settled at once, with nothing registered.
 */
export function executeCall(job: CallJob, runtime: CallRuntime): Promise<CallSettlement> {
  const { tool, options } = job;
  const timeoutMs = tool.timeoutMs ?? options.toolTimeoutMs;
  if (runtime.aborted) return Promise.resolve(stoppedSettlement(tool.name, 'aborted', timeoutMs));
  const startedAt = runtime.now();
  const watch = new CallWatch(runtime, timeoutMs);
  const context: ToolContext = new CallContext(job, watch);
  let returned: unknown;
  const wrap = options.wrapToolExecution;
  try {
    returned =
      wrap === undefined
        ? tool.execute(job.input, context)
        : wrap(() => tool.execute(job.input, context), {
            runId: options.runId,
            step: job.step,
            callId: job.call.id,
            tool: tool.name,
            startedAt,
          });
  } catch (thrown) {
    watch.release(undefined);
    return Promise.resolve(thrownSettlement(tool, thrown));
  }
  if (!isThenable(returned)) {
    // Settled already: nothing to time out; a signal the tool made has nothing left to reach.
    watch.release(undefined);
    return Promise.resolve(settleValue(job, watch, returned, timeoutMs));
  }
  return awaitTool(job, runtime, watch, Promise.resolve(returned), startedAt, timeoutMs);
}

/** A tool that returned a promise: its result, its timeout or the batch's abort, whichever is first. */
function awaitTool(
  job: CallJob,
  runtime: CallRuntime,
  watch: CallWatch,
  execution: Promise<unknown>,
  startedAt: number,
  timeoutMs: number,
): Promise<CallSettlement> {
  const { tool } = job;
  watch.start();
  return watch.run(execution).then((outcome) => {
    let settled: CallSettlement | Promise<CallSettlement>;
    try {
      if (outcome.kind === 'stopped') {
        recordLate(job, execution, runtime, startedAt);
        settled = stoppedSettlement(tool.name, outcome.cause, timeoutMs);
      } else if (outcome.kind === 'thrown') settled = thrownSettlement(tool, outcome.thrown);
      else settled = settleValue(job, watch, outcome.value, timeoutMs);
    } catch (thrown) {
      unwatch(watch, execution);
      throw thrown;
    }
    if (settled instanceof Promise) return settled.finally(() => unwatch(watch, execution));
    unwatch(watch, execution);
    return settled;
  });
}

/** The call is settled: its deadline and abort callback go, and a signal the tool made is released. */
function unwatch(watch: CallWatch, execution: Promise<unknown>): void {
  watch.dispose();
  watch.release(execution);
}

/**
 * What the tool is handed besides its input. `signal` is made only if the tool reads it, by a getter
 * on the class (an object literal with a getter costs a closure and an accessor per call). Spreading
 * the context (`{ ...context }`) therefore leaves `signal` out: pass `context.signal` on by name.
 */
class CallContext implements ToolContext {
  readonly actor: ToolContext['actor'];
  readonly runId: string;
  readonly step: number;
  readonly callId: string;
  readonly #watch: CallWatch;
  readonly #job: CallJob;

  constructor(job: CallJob, watch: CallWatch) {
    this.actor = job.options.actor;
    this.runId = job.options.runId;
    this.step = job.step;
    this.callId = job.call.id;
    this.#watch = watch;
    this.#job = job;
  }

  // Getters, like `signal`: read only by the tools that ask, at no cost per call to the others.
  get jobBudget(): JobBudget | undefined {
    return this.#job.options.jobBudget;
  }

  get spender(): string {
    return `${this.#job.options.spender ?? `agent:${this.runId}`}/tool:${this.#job.tool.name}`;
  }

  get tainted(): boolean {
    return this.#job.taint?.tainted ?? false;
  }

  get signal(): AbortSignal {
    return this.#watch.signal;
  }
}

/** Stages 9 and 10 on the value the tool returned: output checks, then the result as the model sees it. */
function settleValue(
  job: CallJob,
  watch: CallWatch,
  returned: unknown,
  timeoutMs: number,
): CallSettlement | Promise<CallSettlement> {
  const { value, attachments } = splitAttachments(returned);
  const checked = checkOutput(job.tool, value, job.signal);
  // A closure only for an asynchronous check.
  if (!(checked instanceof Promise)) return checkedSettlement(job, value, attachments, timeoutMs, checked);
  return watch
    .check(checked)
    .then((rejected) => checkedSettlement(job, value, attachments, timeoutMs, rejected));
}

/** The result after its output checks: refused, stopped, or sized for the model with its attachments. */
function checkedSettlement(
  job: CallJob,
  value: unknown,
  attachments: readonly unknown[] | undefined,
  timeoutMs: number,
  rejected: OutputCheck | 'stopped',
): CallSettlement {
  const { tool, options } = job;
  if (rejected === 'stopped') return stoppedSettlement(tool.name, 'aborted', timeoutMs);
  const settlement = rejected ?? echoesDropped(sizedSettlement(tool, value, options), job.call, job.input);
  return attachments === undefined || settlement.isError ? settlement : attach(tool, settlement, attachments);
}

/**
 * The attachments a tool returned, each checked as a checkpoint checks a block: one that is not a
 * well-formed image or document keeps the whole result from the model (`invalid_output`).
 */
function attach(tool: AnyTool, settlement: CallSettlement, attachments: readonly unknown[]): CallSettlement {
  for (let at = 0; at < attachments.length; at++) {
    const media = attachments[at] as { type?: unknown } | null;
    const problem =
      media?.type === 'image' || media?.type === 'document'
        ? blockProblem(media, 'user')
        : 'is not an image or document block';
    if (problem !== undefined)
      return {
        ...base(
          'invalid_output',
          errorContent('internal_error', `${tool.name} returned an attachment that could not be read.`),
          true,
        ),
        error: { name: 'AttachmentError', message: `attachment ${at} ${problem.replace(/^\./, '')}` },
        terminal: true,
      };
  }
  return attachments.length === 0 ? settlement : { ...settlement, attachments: attachments as MediaBlock[] };
}

/** A result that arrives after the call gave up is discarded, but recorded. */
function recordLate(
  job: CallJob,
  execution: Promise<unknown>,
  runtime: CallRuntime,
  startedAt: number,
): void {
  const late = (settled: 'resolved' | 'rejected') =>
    job.emit({
      type: 'tool-late-result',
      step: job.step,
      callId: job.call.id,
      tool: job.tool.name,
      settled,
      afterMs: runtime.now() - startedAt,
    });
  execution
    .then(
      () => late('resolved'),
      () => late('rejected'),
    )
    .catch(() => {});
}

/**
 * What the model is told when the tool threw: its own ToolError, a transient failure, or an internal
 * error. The first two quote the error's text, which may quote what the tool fetched ("No page at
 * …: <the page>"), so from an untrusted tool they taint the context like its output would.
 */
function thrownSettlement(tool: AnyTool, thrown: unknown): CallSettlement {
  const untrusted = !tool.trustedOutput;
  try {
    if (isToolError(thrown)) {
      const extra: Record<string, unknown> = { retry: thrown.retry };
      if (thrown.retryAfterSeconds !== undefined) extra['retryAfterSeconds'] = thrown.retryAfterSeconds;
      return {
        status: thrown.fatal ? 'fatal' : 'error',
        content: errorContent(thrown.code, thrown.message, extra),
        isError: true,
        error: errorInfo(thrown),
        fatal: thrown.fatal,
        terminal: thrown.retry === 'no',
        untrusted,
      };
    }
    // Classified, so a 503 from a downstream is not mistaken for a call that can never work.
    const classification = classifyError(thrown);
    if (classification.kind === 'transient' || classification.kind === 'throttled') {
      const extra: Record<string, unknown> = { retry: 'after' };
      if (classification.retryAfterMs !== undefined)
        extra['retryAfterSeconds'] = Math.ceil(classification.retryAfterMs / 1_000);
      return {
        ...base(
          'error',
          errorContent(
            'temporarily_unavailable',
            `${tool.name} is failing for now (${classification.reason}). Trying again later may work; meanwhile try another approach.`,
            extra,
          ),
          true,
        ),
        error: errorInfo(thrown),
        untrusted,
      };
    }
  } catch {
    // A thrown value that cannot be inspected (a Proxy whose traps throw) is an internal error.
  }
  return {
    ...base(
      'error',
      errorContent(
        'internal_error',
        `${tool.name} failed with an internal error. Retrying the same call is unlikely to help; try another approach.`,
      ),
      true,
    ),
    error: errorInfo(thrown),
    terminal: true,
  };
}

/**
 * A trusted result vouches for nothing it echoes from the input the tool received, as the model
 * wrote it or as the tool's schema handed it over (a schema that trims or upper-cases an id hands
 * the tool a value the model never wrote).
 */
function echoesDropped(settlement: CallSettlement, call: CallJob['call'], input: unknown): CallSettlement {
  const leaves = settlement.trustedLeaves;
  if (leaves === undefined || leaves.length === 0) return settlement;
  const kept = withoutEchoes(leaves, [call.input, input]);
  if (kept.length === leaves.length) return settlement;
  return { ...settlement, trustedLeaves: kept, trustedValues: kept.map((leaf) => leaf.value) };
}
