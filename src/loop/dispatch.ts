import { canonicalJson } from '../controls/canonical-json.js';
import { type TaintLedger, valuesAt } from '../controls/taint-ledger.js';
import { type ErrorInfo, errorInfo } from '../errors/error-info.js';
import type { ToolUseBlock } from '../model/content.js';
import { classifyError } from '../resilience/classify-error.js';
import type { Clock } from '../time/clock.js';
import type { TokenEstimator } from '../tokens/token-estimator.js';
import type { Actor, AnyTool, ToolContext } from '../tools/define-tool.js';
import { sizeResult, type Truncation } from '../tools/result-size.js';
import { isToolError } from '../tools/tool-error.js';
import type { ToolCallStatus, TraceEventBody } from '../trace/events.js';
import { linkedController } from './abort.js';
import type { ApprovalRequest, ApprovalVerdict } from './approval.js';
import type { AuthorizationVerdict, Authorizer, TaintOptions } from './options.js';

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
  truncation?: Truncation;
  /** The input a draft or proposal recorded. */
  recorded?: unknown;
}

/** What to do with a call, decided before anything in its batch runs. */
export type CallPlan =
  | { kind: 'settled'; settlement: CallSettlement }
  | { kind: 'execute'; execute: (signal: AbortSignal) => Promise<CallSettlement> }
  | { kind: 'approval'; request: Omit<ApprovalRequest, 'reason' | 'approvalId'> };

export interface PlanRequest {
  call: ToolUseBlock;
  step: number;
  /** A person's decision on this call, when the batch resumes after an approval. */
  verdict: ApprovalVerdict | undefined;
  taint: TaintLedger;
  /** Keys (`tool:canonical-input`) of calls that failed terminally earlier in the run. */
  terminal: ReadonlySet<string>;
  signal: AbortSignal;
}

export type Emit = (event: TraceEventBody) => Promise<void>;

/** Decides and runs tool calls. The loop uses the live dispatcher; a replay uses recorded results. */
export interface Dispatcher {
  plan(request: PlanRequest, emit: Emit): Promise<CallPlan>;
}

/** The JSON the model reads when a call did not produce a result. */
export function errorContent(code: string, message: string, extra?: Record<string, unknown>): string {
  return JSON.stringify({ error: { code, message, ...extra } });
}

/** The key under which a call's terminal failure is remembered. */
export function callKey(call: Pick<ToolUseBlock, 'name' | 'input' | 'inputText'>): string {
  return `${call.name}:${call.input === undefined ? `invalid:${call.inputText ?? ''}` : canonicalJson(call.input)}`;
}

export interface LiveDispatcherOptions {
  tools: ReadonlyMap<string, AnyTool>;
  actor: Actor | undefined;
  authorize: Authorizer;
  clock: Clock;
  runId: string;
  toolTimeoutMs: number;
  maxResultTokens: number | undefined;
  maxInputChars: number;
  writesDisabled: boolean;
  taint: Required<TaintOptions>;
  estimator: TokenEstimator;
}

/** The default authorizer: the actor must hold every scope the tool declares. */
export const scopeAuthorizer: Authorizer = ({ tool, actor }) => {
  if (tool.scopes.length === 0) return { allow: true };
  if (!actor)
    return {
      allow: false,
      reason: `${tool.name} needs scopes [${tool.scopes.join(', ')}] and the run has no actor`,
    };
  const held = new Set(actor.scopes ?? []);
  const missing = tool.scopes.filter((scope) => !held.has(scope));
  if (missing.length === 0) return { allow: true };
  return {
    allow: false,
    reason: `actor ${actor.id} lacks scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
  };
};

const forbiddenKeys = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * One walk over a call's input: the first forbidden key (a prototype-pollution vector) and a
 * lower bound on its JSON length (strings and keys), so the exact length is computed only for
 * inputs that might be too large.
 */
function inspectInput(value: unknown, path: string, found: { forbidden?: string; chars: number }): void {
  if (typeof value === 'string') {
    found.chars += value.length;
    return;
  }
  if (value === null || typeof value !== 'object') {
    found.chars += 1;
    return;
  }
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (forbiddenKeys.has(key) && found.forbidden === undefined) found.forbidden = at;
    found.chars += key.length;
    inspectInput((value as Record<string, unknown>)[key], at, found);
  }
}

/**
 * Validates, authorizes, checks autonomy and taint, then executes calls against real tools. The
 * order matters: authorization comes before preconditions, so a denied caller learns nothing
 * about another user's data from a precondition message.
 */
export function liveDispatcher(options: LiveDispatcherOptions): Dispatcher {
  const available = () => [...options.tools.keys()].join(', ');
  return {
    async plan({ call, step, verdict, taint, terminal, signal }, emit) {
      if (call.input === undefined && call.inputText !== undefined) {
        return settled(
          'invalid_json',
          errorContent(
            'invalid_json',
            `The arguments for ${call.name} were not valid JSON. Send the arguments again as one JSON object.`,
          ),
        );
      }
      const tool = options.tools.get(call.name);
      if (!tool) {
        return settled(
          'unknown_tool',
          errorContent(
            'unknown_tool',
            `There is no tool named "${call.name}". Available tools: ${available()}.`,
          ),
        );
      }
      if (verdict?.decision === 'deny') {
        return settled(
          'denied_by_human',
          errorContent(
            'denied_by_human',
            `A person declined this call: ${verdict.reason}. Do not try it again; continue without it or explain what you need.`,
          ),
          null,
          true,
          true,
        );
      }
      const rawInput = verdict?.decision === 'edit' ? verdict.input : call.input;
      const inspected: { forbidden?: string; chars: number } = { chars: 0 };
      inspectInput(rawInput, '', inspected);
      const size =
        inspected.chars * 2 > options.maxInputChars
          ? (JSON.stringify(rawInput ?? null)?.length ?? 0)
          : inspected.chars;
      if (size > options.maxInputChars) {
        return settled(
          'invalid_input',
          errorContent(
            'invalid_input',
            `The arguments for ${tool.name} are ${size.toLocaleString('en-US')} characters; the limit is ${options.maxInputChars.toLocaleString('en-US')}. Send less, or split the work.`,
          ),
        );
      }
      const forbidden = inspected.forbidden;
      if (forbidden) {
        return settled(
          'invalid_input',
          errorContent(
            'invalid_input',
            `Invalid input for ${tool.name}: the field name at ${forbidden} is not allowed. Remove it and call again.`,
          ),
        );
      }
      const validation = await tool.validate(rawInput);
      if (!validation.ok) {
        const problems = validation.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
        return settled(
          'invalid_input',
          errorContent(
            'invalid_input',
            `Invalid input for ${tool.name}: ${problems}. Fix these fields and call again.`,
          ),
        );
      }
      const input = validation.value;

      const authorization = await authorize(options.authorize, {
        tool,
        input,
        actor: options.actor,
        callId: call.id,
        step,
      });
      await emit({
        type: 'authorization',
        step,
        callId: call.id,
        tool: tool.name,
        actorId: options.actor?.id ?? null,
        allowed: authorization.allow,
        reason: authorization.allow ? null : authorization.reason,
      });
      if (!authorization.allow) {
        return settled(
          'denied',
          errorContent(
            'unauthorized',
            `Not authorized: ${authorization.reason}. Do not retry this call; tell the user it is not permitted.`,
          ),
          null,
          true,
          true,
        );
      }

      const context: ToolContext = {
        signal,
        actor: options.actor,
        runId: options.runId,
        step,
        callId: call.id,
      };
      const problems = await tool.preconditions(input, context);
      if (problems.length > 0) {
        const text = problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ');
        return settled(
          'invalid_input',
          errorContent('precondition_failed', `${tool.name} was not run: ${text}`),
        );
      }

      if (terminal.size > 0 && terminal.has(callKey({ name: tool.name, input }))) {
        return settled(
          'blocked_repeat',
          errorContent(
            'repeated_terminal_failure',
            `This exact ${tool.name} call already failed and cannot succeed as it is. It was not run again. Change the arguments, use another tool, or tell the user what is blocking you.`,
          ),
        );
      }
      if (options.writesDisabled && tool.effect !== 'read') {
        return settled(
          'writes_disabled',
          errorContent(
            'writes_disabled',
            `${tool.name} changes things and writes are switched off right now. Do not retry; tell the user the action could not be taken.`,
          ),
          null,
          true,
          true,
        );
      }

      const approved = verdict?.decision === 'approve' || verdict?.decision === 'edit';
      const askPerson = (cause: 'confirm' | 'tainted_context', untrustedArguments: string[]): CallPlan => ({
        kind: 'approval',
        request: { callId: call.id, tool: tool.name, input, effect: tool.effect, cause, untrustedArguments },
      });
      if (!approved) {
        if (tool.autonomy === 'never') {
          return handoff(
            'proposed',
            { message: `Recorded as a proposal for a person to review; ${tool.name} was not run.` },
            input,
          );
        }
        if (tool.autonomy === 'draft') {
          return handoff(
            'drafted',
            { message: `Drafted for a person to carry out; ${tool.name} was not run.`, draft: input },
            input,
          );
        }
        if (tool.autonomy === 'confirm') return askPerson('confirm', []);
        if (options.taint.enabled && tool.requiresTrustedContext && taint.tainted) {
          const untrustedArguments = taint.untrustedArguments(input, tool.sensitiveArguments);
          const allowListed = options.taint.allowWhileTainted.some((entry) =>
            typeof entry === 'string'
              ? entry === tool.name
              : entry.tool === tool.name && (entry.when?.(input) ?? true),
          );
          const verdictName =
            untrustedArguments.length === 0 ? 'provenance' : allowListed ? 'allow_list' : 'blocked';
          await emit({
            type: 'taint-check',
            step,
            callId: call.id,
            tool: tool.name,
            tainted: true,
            verdict: verdictName,
            untrustedArguments,
          });
          if (verdictName === 'blocked') {
            if (options.taint.onTaintedCall === 'deny') {
              return settled(
                'blocked_tainted',
                errorContent(
                  'tainted_context',
                  `${tool.name} was not run: content from an untrusted source is in the conversation and these arguments do not come from the user: ${untrustedArguments.join(', ')}. Ask the user to confirm them.`,
                ),
                null,
                true,
                true,
              );
            }
            return askPerson('tainted_context', untrustedArguments);
          }
        }
      }

      return {
        kind: 'execute',
        execute: (batchSignal) => execute(tool, input, call, step, batchSignal, emit),
      };
    },
  };

  async function execute(
    tool: AnyTool,
    input: unknown,
    call: ToolUseBlock,
    step: number,
    signal: AbortSignal,
    emit: Emit,
  ): Promise<CallSettlement> {
    const timeoutMs = tool.timeoutMs ?? options.toolTimeoutMs;
    const startedAt = options.clock.now();
    // The tool's own signal is made only if the tool reads it: an AbortController per call is the
    // single largest cost of a dispatch, and most tools never look.
    let own: { controller: AbortController; dispose: () => void } | undefined;
    let stoppedBy: { type: 'timeout'; ms: number } | undefined;
    const context: ToolContext = {
      get signal() {
        if (!own) {
          own = linkedController(signal);
          if (stoppedBy) own.controller.abort(stoppedBy);
        }
        return own.controller.signal;
      },
      actor: options.actor,
      runId: options.runId,
      step,
      callId: call.id,
    };
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    let onAbort: (() => void) | undefined;
    const execution = Promise.resolve().then(() => tool.execute(input, context));
    try {
      const outcome = await new Promise<
        | { kind: 'value'; value: unknown }
        | { kind: 'thrown'; thrown: unknown }
        | { kind: 'stopped'; cause: 'timeout' | 'aborted' }
      >((resolve) => {
        if (signal.aborted) return resolve({ kind: 'stopped', cause: 'aborted' });
        timer = options.clock.setTimeout(() => {
          stoppedBy = { type: 'timeout', ms: timeoutMs };
          own?.controller.abort(stoppedBy);
          resolve({ kind: 'stopped', cause: 'timeout' });
        }, timeoutMs);
        onAbort = () => resolve({ kind: 'stopped', cause: 'aborted' });
        signal.addEventListener('abort', onAbort, { once: true });
        execution.then(
          (value) => resolve({ kind: 'value', value }),
          (thrown: unknown) => resolve({ kind: 'thrown', thrown }),
        );
      });
      if (outcome.kind === 'stopped') {
        // A result that arrives after we gave up is discarded, but recorded.
        execution
          .then(
            () =>
              emit({
                type: 'tool-late-result',
                step,
                callId: call.id,
                tool: tool.name,
                settled: 'resolved',
                afterMs: options.clock.now() - startedAt,
              }),
            () =>
              emit({
                type: 'tool-late-result',
                step,
                callId: call.id,
                tool: tool.name,
                settled: 'rejected',
                afterMs: options.clock.now() - startedAt,
              }),
          )
          .catch(() => {});
        if (outcome.cause === 'timeout') {
          return settled(
            'timeout',
            errorContent(
              'timeout',
              `${tool.name} did not finish within ${timeoutMs} ms. It may be slow right now; try a narrower request or another tool.`,
            ),
            null,
            true,
          ).settlement;
        }
        return settled('aborted', errorContent('aborted', `${tool.name} was stopped before it finished.`))
          .settlement;
      }
      if (outcome.kind === 'value') return await finishOutput(tool, outcome.value);
      const thrown = outcome.thrown;
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
        };
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
    } finally {
      if (timer !== undefined) options.clock.clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
      // A tool still running keeps its signal linked until it settles, so an abort still reaches it.
      if (own) execution.finally(() => own?.dispose()).catch(() => {});
    }
  }

  async function finishOutput(tool: AnyTool, output: unknown): Promise<CallSettlement> {
    const checked = tool.checkOutput(output);
    const problems = Array.isArray(checked) ? checked : await checked;
    if (problems.length > 0) {
      return {
        ...base(
          'validation_error',
          errorContent(
            'validation_error',
            `${tool.name} returned data that failed its checks, so it is not shown. Do not retry the same call; try another approach or tell the user.`,
          ),
          true,
        ),
        error: { name: 'OutputValidationError', message: problems.join('; ') },
        terminal: true,
      };
    }
    let text: string | undefined;
    try {
      text = typeof output === 'string' ? output : JSON.stringify(output === undefined ? null : output);
    } catch (thrown) {
      return {
        ...base(
          'invalid_output',
          errorContent('internal_error', `${tool.name} returned a result that could not be read.`),
          true,
        ),
        error: errorInfo(thrown),
        terminal: true,
      };
    }
    if (text === undefined) text = 'null';
    const limit = tool.maxResultTokens ?? options.maxResultTokens;
    let truncation: Truncation | undefined;
    if (limit !== undefined) {
      const sized = sizeResult(output, text, limit, options.estimator, {
        tool: tool.name,
        paging: tool.paging,
      });
      text = sized.content;
      truncation = sized.truncation;
    }
    const untrusted = !tool.trustedOutput;
    const trustedValues = tool.trustedOutput
      ? primitivesOf(output, [])
      : tool.trustedOutputFields.flatMap((path) => valuesAt(output, path));
    const settlement: CallSettlement = {
      ...base('ok', untrusted ? delimitUntrusted(tool.name, text) : text, false),
      untrusted,
      trustedValues,
    };
    if (truncation) settlement.truncation = truncation;
    return settlement;
  }
}

/**
 * Wraps untrusted output in a structural delimiter the model can see, escaping any look-alike
 * closing tag inside it. A delimiter is not a defence on its own (the taint guard is); it keeps
 * the boundary visible.
 */
export function delimitUntrusted(tool: string, text: string): string {
  return `<tool-output tool="${tool}" trust="untrusted">\n${text.replace(/<\/?tool-output/gi, (tag) => tag.replace('<', '&lt;'))}\n</tool-output>`;
}

async function authorize(
  authorizer: Authorizer,
  request: Parameters<Authorizer>[0],
): Promise<AuthorizationVerdict> {
  try {
    const verdict = await authorizer(request);
    // Fail closed: only an explicit `{ allow: true }` lets the call through.
    if (verdict && verdict.allow === true) return { allow: true };
    const reason =
      verdict && verdict.allow === false && typeof verdict.reason === 'string'
        ? verdict.reason
        : 'denied by policy';
    return { allow: false, reason };
  } catch (thrown) {
    return { allow: false, reason: `authorization failed (${errorInfo(thrown).message}); denied by default` };
  }
}

/** A call handed to a person instead of performed: the model is told, and the input is kept. */
function handoff(
  status: 'proposed' | 'drafted',
  body: Record<string, unknown>,
  input: unknown,
): { kind: 'settled'; settlement: CallSettlement } {
  return {
    kind: 'settled',
    settlement: { ...base(status, JSON.stringify({ status, ...body }), false), recorded: input },
  };
}

function primitivesOf(value: unknown, out: unknown[]): unknown[] {
  if (typeof value === 'string' || typeof value === 'number') out.push(value);
  else if (Array.isArray(value)) for (const item of value) primitivesOf(item, out);
  else if (value !== null && typeof value === 'object')
    for (const member of Object.values(value)) primitivesOf(member, out);
  return out;
}

function base(status: ToolCallStatus, content: string, isError: boolean): CallSettlement {
  return { status, content, isError, error: null, fatal: false };
}

function settled(
  status: ToolCallStatus,
  content: string,
  error: ErrorInfo | null = null,
  isError = true,
  terminal = false,
): { kind: 'settled'; settlement: CallSettlement } {
  return { kind: 'settled', settlement: { status, content, isError, error, fatal: false, terminal } };
}
