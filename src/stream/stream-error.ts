/**
 * An error the provider sent inside a stream (Anthropic's `error` event, an OpenAI-compatible
 * `error` chunk, a Responses `error` / `response.failed` event), with the provider's `type`/`code`
 * and message kept, and the HTTP status it stands for so `classifyError` can read it.
 */
export class StreamError extends Error {
  override name = 'StreamError';
  readonly status: number | undefined;
  readonly type: string;
  /** The provider's error body as sent, when there was one. */
  readonly body: unknown;
  constructor(type: string, message: string, options: { status?: number; body?: unknown } = {}) {
    super(message);
    this.type = type;
    this.body = options.body;
    this.status = options.status ?? statusOfErrorType(type);
  }
}

/** The HTTP status an error body's `type` (or `code`) stands for, as the providers document them. */
export function statusOfErrorType(type: string | undefined): number | undefined {
  switch (type) {
    case 'overloaded_error':
      return 529;
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
      return 429;
    case 'api_error':
    case 'server_error':
      return 500;
    case 'invalid_request_error':
    case 'tool_use_failed':
      return 400;
    case 'authentication_error':
      return 401;
    case 'permission_error':
      return 403;
    case 'not_found_error':
      return 404;
    case 'request_too_large':
      return 413;
    case 'timeout_error':
      return 504;
    default:
      return undefined;
  }
}

/**
 * A stream frame that was not JSON (the SDK's decoder throws a `SyntaxError`): a garbled upstream
 * response, as a 502 `StreamError` worth another attempt, never a truncated answer.
 */
export function malformedEventError(error: unknown): StreamError | undefined {
  if (!(error instanceof SyntaxError)) return undefined;
  return new StreamError('malformed_event', `the provider sent an event that is not JSON: ${error.message}`, {
    status: 502,
  });
}

/**
 * Whether a thrown value is the provider speaking (a `StreamError`, or an SDK `APIError` carrying an
 * HTTP status or an error body) rather than the connection failing. A provider error after partial
 * output is a model error to classify and retry, never a truncated answer.
 */
export function isProviderError(error: unknown): boolean {
  if (error instanceof StreamError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const fields = error as { status?: unknown; error?: unknown; name?: unknown };
  if (fields.name === 'APIUserAbortError' || fields.name === 'APIConnectionError') return false;
  if (typeof fields.status === 'number') return true;
  return typeof fields.error === 'object' && fields.error !== null;
}

/**
 * What an assembler does with an error thrown while it read a stream. It throws: a garbled frame as
 * a `malformed_event`; an error the SDK raised for an in-stream `error` event (an `APIError` with no
 * status and the provider's body in `error`) as the `StreamError` that `fromBody` makes of the body,
 * when the provider has one; any provider error; and any failure before the first event. It
 * returns only for a connection that dropped after output: the assembler keeps what arrived.
 */
export function rethrowUnlessDropped(
  error: unknown,
  received: number,
  fromBody?: (body: object) => StreamError,
): void {
  const garbled = malformedEventError(error);
  if (garbled) throw garbled;
  const fields = error as { status?: unknown; error?: unknown } | null;
  const body = fields?.error;
  if (
    fromBody &&
    error instanceof Error &&
    !(error instanceof StreamError) &&
    fields?.status === undefined &&
    typeof body === 'object' &&
    body !== null
  )
    throw fromBody(body);
  if (received === 0 || isProviderError(error)) throw error;
}
