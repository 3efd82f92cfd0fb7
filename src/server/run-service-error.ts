import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every error the run service answers with, and its HTTP status. */
export const runServiceErrorStatus = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  invalid_request: 400,
  unsupported_media_type: 415,
  body_too_large: 413,
  unknown_agent: 400,
  invalid_last_event_id: 400,
  duplicate_run: 409,
  stale_approval: 409,
  not_awaiting_approval: 409,
  already_ended: 409,
  read_only: 405,
  internal: 500,
} as const satisfies Record<string, ContentfulStatusCode>;

/** The `code` of a run service error. */
export type RunServiceErrorCode = keyof typeof runServiceErrorStatus;

/** The body of every error response: `{ error: { code, message, ... } }`. */
export interface RunServiceErrorBody {
  error: {
    code: RunServiceErrorCode;
    message: string;
    /** For `stale_approval`: the approval ids the run is not waiting on. */
    staleApprovalIds?: string[];
    /** For `invalid_request`: where the body is wrong. */
    issues?: { path: string; message: string }[];
  };
}

/** Answers with a JSON error; the status follows from the code. */
export function errorResponse(
  c: Context,
  code: RunServiceErrorCode,
  message: string,
  extra: Omit<RunServiceErrorBody['error'], 'code' | 'message'> = {},
): Response {
  if (code === 'unauthorized') c.header('WWW-Authenticate', 'Bearer realm="reins"');
  const body: RunServiceErrorBody = { error: { code, message, ...extra } };
  return c.json(body, runServiceErrorStatus[code]);
}
