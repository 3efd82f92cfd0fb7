import type { ErrorInfo } from '../../errors/error-info.js';
import type { ToolCallStatus } from '../../trace/events.js';
import type { Guarded } from '../boundary.js';
import type { CallPlan, CallSettlement } from '../call-plan.js';

/** A plan that settles the call without running it. */
export type Settled = { kind: 'settled'; settlement: CallSettlement };

/** The JSON the model reads when a call did not produce a result. */
export function errorContent(code: string, message: string, extra?: Record<string, unknown>): string {
  return JSON.stringify({ error: { code, message, ...extra } });
}

export function base(status: ToolCallStatus, content: string, isError: boolean): CallSettlement {
  return { status, content, isError, error: null, fatal: false };
}

export function settled(
  status: ToolCallStatus,
  content: string,
  error: ErrorInfo | null = null,
  isError = true,
  terminal = false,
): Settled {
  return { kind: 'settled', settlement: { status, content, isError, error, fatal: false, terminal } };
}

/** A call handed to a person instead of performed: the model is told, and the input is kept. */
export function handoff(
  status: 'proposed' | 'drafted',
  body: Record<string, unknown>,
  input: unknown,
): Settled {
  return {
    kind: 'settled',
    settlement: { ...base(status, JSON.stringify({ status, ...body }), false), recorded: input },
  };
}

/** What a callback that threw or was abandoned comes to: the run ends `hard_error`, or as its signal says. */
export function planOf(guarded: Exclude<Guarded<unknown>, { ok: true }>): CallPlan {
  return guarded.stopped
    ? { kind: 'stopped' }
    : { kind: 'failed', source: guarded.source, error: guarded.error };
}

/** The settlement of a call stopped before it finished: its timeout, or the batch's abort. */
export function stoppedSettlement(
  tool: string,
  cause: 'timeout' | 'aborted',
  timeoutMs: number,
): CallSettlement {
  if (cause === 'timeout') {
    return settled(
      'timeout',
      errorContent(
        'timeout',
        `${tool} did not finish within ${timeoutMs} ms. It may be slow right now; try a narrower request or another tool.`,
      ),
      null,
      true,
    ).settlement;
  }
  return settled('aborted', errorContent('aborted', `${tool} was stopped before it finished.`)).settlement;
}
