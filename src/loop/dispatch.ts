import { type ErrorInfo, errorInfo } from '../errors/error-info.js';
import type { ToolUseBlock } from '../model/content.js';
import type { Clock } from '../time/clock.js';
import type { Actor, AnyTool } from '../tools/define-tool.js';
import { isToolError } from '../tools/tool-error.js';
import type { ToolCallStatus, TraceEventBody } from '../trace/events.js';
import { abortCauseOf, linkedController, raceAbort } from './abort.js';
import type { AuthorizationVerdict, Authorizer } from './options.js';

/** How one call was settled: what the model sees, and what the trace keeps. */
export interface CallSettlement {
  status: ToolCallStatus;
  content: string;
  isError: boolean;
  error: ErrorInfo | null;
  /** A fatal tool error ends the run and aborts sibling calls. */
  fatal: boolean;
}

export interface DispatchRequest {
  call: ToolUseBlock;
  step: number;
  /** Aborts when the run is cancelled, the clock runs out or a sibling fails fatally. */
  signal: AbortSignal;
}

export type Emit = (event: TraceEventBody) => Promise<void>;

/** Settles one tool call. The loop uses the live dispatcher; a replay uses recorded results. */
export type Dispatcher = (request: DispatchRequest, emit: Emit) => Promise<CallSettlement>;

/** The JSON the model reads when a call did not produce a result. */
export function errorContent(code: string, message: string, extra?: Record<string, unknown>): string {
  return JSON.stringify({ error: { code, message, ...extra } });
}

export interface LiveDispatcherOptions {
  tools: ReadonlyMap<string, AnyTool>;
  actor: Actor | undefined;
  authorize: Authorizer;
  clock: Clock;
  runId: string;
  toolTimeoutMs: number;
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

/** Validates, authorizes and executes calls against real tools. */
export function liveDispatcher(options: LiveDispatcherOptions): Dispatcher {
  const available = () => [...options.tools.keys()].join(', ');
  return async ({ call, step, signal }, emit) => {
    if (call.input === undefined && call.inputText !== undefined) {
      return settle(
        'invalid_json',
        errorContent(
          'invalid_json',
          `The arguments for ${call.name} were not valid JSON. Send the arguments again as one JSON object.`,
        ),
      );
    }
    const tool = options.tools.get(call.name);
    if (!tool) {
      return settle(
        'unknown_tool',
        errorContent(
          'unknown_tool',
          `There is no tool named "${call.name}". Available tools: ${available()}.`,
        ),
      );
    }
    const validation = await tool.validate(call.input);
    if (!validation.ok) {
      const problems = validation.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      return settle(
        'invalid_input',
        errorContent(
          'invalid_input',
          `Invalid input for ${tool.name}: ${problems}. Fix these fields and call again.`,
        ),
      );
    }

    const verdict = await authorize(options.authorize, {
      tool,
      input: validation.value,
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
      allowed: verdict.allow,
      reason: verdict.allow ? null : verdict.reason,
    });
    if (!verdict.allow) {
      return settle(
        'denied',
        errorContent(
          'unauthorized',
          `Not authorized: ${verdict.reason}. Do not retry this call; tell the user it is not permitted.`,
        ),
      );
    }

    await emit({ type: 'tool-call', step, callId: call.id, tool: tool.name, input: validation.value });
    const timeoutMs = tool.timeoutMs ?? options.toolTimeoutMs;
    const { controller, dispose } = linkedController(signal);
    const timer = options.clock.setTimeout(
      () => controller.abort({ type: 'timeout', ms: timeoutMs }),
      timeoutMs,
    );
    try {
      const execution = Promise.resolve().then(() =>
        tool.execute(validation.value, {
          signal: controller.signal,
          actor: options.actor,
          runId: options.runId,
          step,
          callId: call.id,
        }),
      );
      const raced = await raceAbort(execution, controller.signal);
      if (raced.aborted) {
        const cause = abortCauseOf(controller.signal);
        if (cause.type === 'timeout') {
          return settle(
            'timeout',
            errorContent(
              'timeout',
              `${tool.name} did not finish within ${cause.ms} ms. It may be slow right now; try a narrower request or another tool.`,
            ),
          );
        }
        return settle('aborted', errorContent('aborted', `${tool.name} was stopped before it finished.`));
      }
      return serialize(tool.name, raced.value);
    } catch (thrown) {
      if (isToolError(thrown)) {
        const extra: Record<string, unknown> = { retry: thrown.retry };
        if (thrown.retryAfterSeconds !== undefined) extra['retryAfterSeconds'] = thrown.retryAfterSeconds;
        return {
          status: thrown.fatal ? 'fatal' : 'error',
          content: errorContent(thrown.code, thrown.message, extra),
          isError: true,
          error: errorInfo(thrown),
          fatal: thrown.fatal,
        };
      }
      return settle(
        'error',
        errorContent(
          'internal_error',
          `${tool.name} failed with an internal error. Retrying the same call is unlikely to help; try another approach.`,
        ),
        errorInfo(thrown),
      );
    } finally {
      options.clock.clearTimeout(timer);
      dispose();
    }
  };
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

function serialize(toolName: string, output: unknown): CallSettlement {
  if (typeof output === 'string') return settle('ok', output, null, false);
  let text: string | undefined;
  try {
    text = JSON.stringify(output === undefined ? null : output);
  } catch (thrown) {
    return settle(
      'invalid_output',
      errorContent('internal_error', `${toolName} returned a result that could not be read.`),
      errorInfo(thrown),
    );
  }
  return settle('ok', text ?? 'null', null, false);
}

function settle(
  status: ToolCallStatus,
  content: string,
  error: ErrorInfo | null = null,
  isError = true,
): CallSettlement {
  return { status, content, isError, error, fatal: false };
}
