import type { JobBudget } from '../budget/job-budget.js';
import type { Clock } from '../time/clock.js';
import type { TokenEstimator } from '../tokens/token-estimator.js';
import type { Actor, AnyTool, ToolContext } from '../tools/define-tool.js';
import type { CallPlan, Dispatcher, Emit, PlanRequest } from './call-plan.js';
import { authorizeCall } from './dispatch/authorize-call.js';
import { approvedBy, checkAutonomy, checkHumanDenial } from './dispatch/check-autonomy.js';
import { checkCall, checkInputShape, validateInput } from './dispatch/check-boundary.js';
import { checkKillSwitch } from './dispatch/check-kill-switch.js';
import { checkPreconditions } from './dispatch/check-preconditions.js';
import { checkTaint, commitCall } from './dispatch/check-taint.js';
import { checkTerminalRepeat } from './dispatch/check-terminal-repeat.js';
import { executeCall } from './dispatch/execute-call.js';
import { andThen, type MaybePromise } from './dispatch/maybe-async.js';
import type { Authorizer, ResolvedTaintOptions, ToolExecutionWrapper } from './options.js';

export type { CallPlan, CallSettlement, Dispatcher, Emit, PlanRequest } from './call-plan.js';
export { callKey } from './dispatch/check-terminal-repeat.js';
export { errorContent } from './dispatch/settlement.js';
export { delimitUntrusted } from './dispatch/size-result.js';

export interface LiveDispatcherOptions {
  tools: ReadonlyMap<string, AnyTool>;
  actor: Actor | undefined;
  authorize: Authorizer;
  /** The run's clock. Unused by dispatch: calls time themselves on the batch's `CallRuntime`. */
  clock: Clock;
  runId: string;
  toolTimeoutMs: number;
  maxResultTokens: number | undefined;
  maxInputChars: number;
  writesDisabled: boolean;
  taint: ResolvedTaintOptions;
  estimator: TokenEstimator;
  /** Wraps each tool's `execute` (`RunOptions.wrapToolExecution`). */
  wrapToolExecution?: ToolExecutionWrapper | undefined;
  /** The job's budget, handed to tools as `context.jobBudget`. */
  jobBudget?: JobBudget | undefined;
  /** The run's name on the job's bill; tools spend under `<spender>/tool:<name>`. */
  spender?: string | undefined;
}

/** The default authorizer: the actor must hold every scope the tool declares. */
export const scopeAuthorizer: Authorizer = ({ tool, actor }) => {
  if (tool.scopes.length === 0) return allowed;
  if (!actor)
    return {
      allow: false,
      reason: `${tool.name} needs scopes [${tool.scopes.join(', ')}] and the run has no actor`,
    };
  const held = actor.scopes ?? [];
  // Read each call, never cached: scopes revoked mid-run count at once. A long list gets a set.
  const set = held.length > 16 ? new Set(held) : undefined;
  let missing: string[] | undefined;
  for (const scope of tool.scopes)
    if (!(set ? set.has(scope) : held.includes(scope))) {
      missing ??= [];
      missing.push(scope);
    }
  if (missing === undefined) return allowed;
  return {
    allow: false,
    reason: `actor ${actor.id} lacks scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
  };
};

const allowed = Object.freeze({ allow: true as const });

/**
 * Validates, authorizes, checks autonomy and taint, then executes calls against real tools: the
 * README's pipeline, one stage per file under `./dispatch/`. The order matters: authorization comes
 * before preconditions, so a denied caller learns nothing about another user's data from a
 * precondition message. Every user callback runs inside the error boundary, so a plan never
 * rejects because of one (it comes back `failed` or `stopped`), and a plan whose callbacks are all
 * synchronous is returned synchronously.
 */
export function liveDispatcher(options: LiveDispatcherOptions): Dispatcher {
  /** Stages 2–3: authorization, then the tool's preconditions. */
  const checked = (
    tool: AnyTool,
    input: unknown,
    request: PlanRequest,
    emit: Emit,
  ): MaybePromise<CallPlan> => {
    const { call, step, signal } = request;
    const authorization = { tool, input, actor: options.actor, callId: call.id, step };
    const authorized = authorizeCall(options.authorize, authorization, signal, emit);
    // Branches, not andThen: a closure per call only when the authorizer or a sink is asynchronous.
    if (authorized instanceof Promise)
      return authorized.then((denied) => afterAuthorization(denied, tool, input, request, emit));
    return afterAuthorization(authorized, tool, input, request, emit);
  };

  const afterAuthorization = (
    denied: CallPlan | undefined,
    tool: AnyTool,
    input: unknown,
    request: PlanRequest,
    emit: Emit,
  ): MaybePromise<CallPlan> => {
    if (denied) return denied;
    if (tool.hasPreconditions === false) return gated(tool, input, request, emit);
    const { call, step, signal } = request;
    const context: ToolContext = {
      signal,
      actor: options.actor,
      runId: options.runId,
      step,
      callId: call.id,
    };
    return andThen(
      checkPreconditions(tool, input, context, signal),
      (refusal) => refusal ?? gated(tool, input, request, emit),
    );
  };

  /** Stages 4–7: terminal repeats, the kill switch, autonomy, the taint guard; then the call may run. */
  const gated = (tool: AnyTool, input: unknown, request: PlanRequest, emit: Emit): MaybePromise<CallPlan> => {
    const refused =
      checkTerminalRepeat(tool, input, request) ?? checkKillSwitch(tool, options.writesDisabled);
    if (refused) return refused;
    const runs: CallPlan = {
      kind: 'execute',
      execute: (runtime) => {
        // Caps and the plan's uses are counted when the call starts, so a batch's calls see each other.
        const refused = commitCall(tool, input, request.taint, options.taint);
        if (refused) return Promise.resolve(refused.settlement);
        return executeCall(
          {
            tool,
            input,
            call: request.call,
            step: request.step,
            signal: request.signal,
            emit,
            options,
            taint: request.taint,
          },
          runtime,
        );
      },
    };
    if (approvedBy(request.verdict)) return runs;
    const handedOver = checkAutonomy(request.call, tool, input);
    // A call that would ask for confirmation anyway still meets the taint guard first, so under
    // taint the person is asked with `cause: 'tainted_context'` and the untrusted arguments shown
    // (or, in deny mode, the call is refused) rather than a plain confirmation.
    if (handedOver && !(handedOver.kind === 'approval' && request.taint.tainted)) return handedOver;
    return andThen(checkTaint(tool, input, request, options.taint, emit), (blocked) => {
      if (blocked) return blocked;
      // The person confirming is told the context is tainted, even when every argument checked out.
      if (handedOver?.kind === 'approval' && request.taint.tainted && options.taint.enabled)
        return { ...handedOver, request: { ...handedOver.request, cause: 'tainted_context' as const } };
      return handedOver ?? runs;
    });
  };

  return {
    /** Stage 1, the boundary: JSON, a known and offered tool, a person's denial, size and keys, the schema. */
    plan(request, emit) {
      const { call, verdict } = request;
      const refused = checkCall(call, options.tools, request.offered) ?? checkHumanDenial(verdict);
      if (refused) return refused;
      const tool = options.tools.get(call.name) as AnyTool;
      const raw = verdict?.decision === 'edit' ? verdict.input : call.input;
      const malformed = checkInputShape(tool, raw, options.maxInputChars);
      if (malformed) return malformed;
      const validation = validateInput(tool, raw, request.signal);
      if (validation instanceof Promise)
        return validation.then((valid) =>
          valid.kind === 'valid' ? checked(tool, valid.input, request, emit) : valid,
        );
      return validation.kind === 'valid' ? checked(tool, validation.input, request, emit) : validation;
    },
  };
}
