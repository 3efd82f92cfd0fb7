import { errorInfo } from '../../errors/error-info.js';
import { type Guarded, guard } from '../boundary.js';
import type { CallPlan, Emit } from '../call-plan.js';
import type { AuthorizationRequest, AuthorizationVerdict, Authorizer } from '../options.js';
import { emitted, type MaybePromise } from './maybe-async.js';
import { errorContent, settled } from './settlement.js';

/**
 * Stage 2: authorization against the actor, recorded as an `authorization` event. Fail closed: a
 * throw, or anything but `{ allow: true }`, denies; only an abandoned authorizer (the run's signal
 * aborted while it ran) stops the run instead. Returns undefined when the call may go on.
 */
export function authorizeCall(
  authorize: Authorizer,
  request: AuthorizationRequest,
  signal: AbortSignal,
  emit: Emit,
): MaybePromise<CallPlan | undefined> {
  // The source is never surfaced: a throwing authorizer denies the call, it does not end the run.
  const answer = guard('predicate', () => authorize(request), signal);
  // Branches, not andThen: a closure per call only when the authorizer or the sink is asynchronous.
  if (answer instanceof Promise) return answer.then((settled) => recordVerdict(settled, request, emit));
  return recordVerdict(answer, request, emit);
}

/** The `authorization` event, then the denial (or undefined: the call may go on). */
function recordVerdict(
  answer: Guarded<AuthorizationVerdict | undefined>,
  request: AuthorizationRequest,
  emit: Emit,
): MaybePromise<CallPlan | undefined> {
  if (!answer.ok && answer.stopped) return { kind: 'stopped' } as const;
  const verdict = answer.ok
    ? verdictOf(answer.value)
    : { allow: false as const, reason: failedReason(answer.error.message) };
  const recorded = emitted(
    emit({
      type: 'authorization',
      step: request.step,
      callId: request.callId,
      tool: request.tool.name,
      actorId: request.actor?.id ?? null,
      allowed: verdict.allow,
      reason: verdict.allow ? null : verdict.reason,
    }),
  );
  if (recorded instanceof Promise) return recorded.then(() => denialOf(verdict));
  return denialOf(verdict);
}

function denialOf(verdict: AuthorizationVerdict): CallPlan | undefined {
  return verdict.allow ? undefined : denial(verdict.reason);
}

function failedReason(message: string): string {
  return `authorization failed (${message}); denied by default`;
}

const allowed: AuthorizationVerdict = Object.freeze({ allow: true as const });

/** Only an explicit `{ allow: true }` lets the call through. */
function verdictOf(verdict: AuthorizationVerdict | undefined): AuthorizationVerdict {
  try {
    if (verdict && verdict.allow === true) return allowed;
    const reason =
      verdict && verdict.allow === false && typeof verdict.reason === 'string'
        ? verdict.reason
        : 'denied by policy';
    return { allow: false, reason };
  } catch (thrown) {
    return { allow: false, reason: failedReason(errorInfo(thrown).message) };
  }
}

function denial(reason: string): CallPlan {
  return settled(
    'denied',
    errorContent(
      'unauthorized',
      `Not authorized: ${reason}. Do not retry this call; tell the user it is not permitted.`,
    ),
    null,
    true,
    true,
  );
}
