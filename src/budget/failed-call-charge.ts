import { classifyError } from '../resilience/classify-error.js';

/** Errors that mean the request never reached the provider: nothing was billed. */
const neverSent = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
]);

/**
 * What a failed model call leaves on the job's bill. A provider answers an HTTP error (400, 429,
 * 500, 529) before it generates anything and bills nothing for it: `release`. A call that never
 * connected is not billed either. A call abandoned after it was sent (aborted, timed out, a
 * connection reset mid-stream, or an error reins cannot read) may have been: providers bill the
 * tokens a request generated even when the client stopped listening, and the client never learns
 * how many. Those `keep` their whole reservation (an overcount of at most one call's maximum).
 */
export function failedCallCharge(error: unknown): 'release' | 'keep' {
  const verdict = classifyError(error);
  if (verdict.status !== undefined) return 'release';
  let code: unknown;
  try {
    code = (error as { code?: unknown } | null)?.code;
  } catch {
    // An error that cannot be read cannot show it was never sent.
    return 'keep';
  }
  if (typeof code === 'string' && neverSent.has(code)) return 'release';
  return 'keep';
}
