import { statusOfErrorType } from '../stream/stream-error.js';
import { isToolError } from '../tools/tool-error.js';

/** What an error says about trying again. */
export type ErrorClass = 'transient' | 'throttled' | 'terminal' | 'cancelled';

/** The verdict on one error. */
export interface Classification {
  kind: ErrorClass;
  /** The HTTP status the error carried, if any. */
  status?: number;
  /** How long the server asked us to wait, capped; absent when it said nothing usable. */
  retryAfterMs?: number;
  /** Why, in a few words: `status 429`, `overloaded_error`, `ECONNRESET`, `aborted`, `unclassified`. */
  reason: string;
  /** The provider's own error message, when the error carried one (kept for the trace and the user). */
  providerMessage?: string;
}

export interface ClassifyOptions {
  /** The longest Retry-After honoured. @default 60_000 */
  maxRetryAfterMs?: number;
  /** For Retry-After HTTP dates. @default Date.now */
  now?: () => number;
}

/**
 * Statuses worth retrying. Everything else is terminal: retryable is an allowlist. 409 is here
 * because both official SDKs retry it (a lock timeout or a conflicting concurrent request).
 */
export const transientStatuses: ReadonlySet<number> = new Set([408, 409, 500, 502, 503, 504]);
export const throttledStatuses: ReadonlySet<number> = new Set([429, 529]);

const transportCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);
const transientNames = new Set([
  'APIConnectionError',
  'APIConnectionTimeoutError',
  'TimeoutError',
  'ConnectTimeoutError',
  'HeadersTimeoutError',
  'BodyTimeoutError',
  'SocketError',
]);
const cancelledNames = new Set(['AbortError', 'APIUserAbortError']);
const terminalNames = new Set(['ZodError', 'ValidationError', 'ConfigurationError', 'SyntaxError']);

type Loose = { [key: string]: unknown };

/**
 * Classifies an error before anyone retries it. Understands the official Anthropic and OpenAI SDK
 * errors (`status`, `headers`, `APIConnectionError`, `APIUserAbortError`), `fetch` responses and
 * undici/Node network errors, reins' `ToolError`, and follows `cause` three levels. Anything it
 * does not recognize (or cannot read) is terminal: a retry must be earned. Never throws.
 *
 * @example
 * classifyError(Object.assign(new Error('rate limited'), { status: 429, headers: { 'retry-after': '2' } }));
 * // { kind: 'throttled', status: 429, retryAfterMs: 2000, reason: 'status 429' }
 */
export function classifyError(error: unknown, options: ClassifyOptions = {}): Classification {
  try {
    return classifyAt(error, options, 0) ?? { kind: 'terminal', reason: 'unclassified' };
  } catch {
    // A Proxy, a throwing getter: an error that cannot be read cannot earn a retry. Never throws.
    return { kind: 'terminal', reason: 'unreadable error' };
  }
}

function classifyAt(error: unknown, options: ClassifyOptions, depth: number): Classification | undefined {
  if (error === null || error === undefined || depth > 3) return undefined;
  if (typeof error !== 'object') return undefined;
  const value = error as Loose;
  const name = typeof value['name'] === 'string' ? value['name'] : '';

  if (cancelledNames.has(name)) return { kind: 'cancelled', reason: 'aborted' };
  if (isToolError(error)) {
    const retryAfterMs =
      typeof error.retryAfterSeconds === 'number'
        ? capped(error.retryAfterSeconds * 1_000, options)
        : undefined;
    const kind: ErrorClass =
      error.retry === 'no' ? 'terminal' : error.retry === 'after' ? 'throttled' : 'transient';
    return withRetryAfter({ kind, reason: `tool error ${error.code}` }, retryAfterMs);
  }

  const provider = providerErrorOf(value);
  const status = statusOf(value) ?? provider.status;
  if (status !== undefined || provider.type !== undefined) {
    const verdict = classifyProvider(status, provider, headersOf(value), options);
    if (verdict) return provider.message ? { ...verdict, providerMessage: provider.message } : verdict;
  }

  const code = typeof value['code'] === 'string' ? value['code'] : undefined;
  if (code && transportCodes.has(code)) return { kind: 'transient', reason: code };
  if (transientNames.has(name)) return { kind: 'transient', reason: name };
  const message = typeof value['message'] === 'string' ? value['message'] : '';
  if (/socket hang up|network (error|connection was lost)|fetch failed/i.test(message)) {
    // `fetch failed` wraps the real cause; prefer its verdict when it has one.
    return (
      classifyAt(value['cause'], options, depth + 1) ?? { kind: 'transient', reason: message.toLowerCase() }
    );
  }
  if (terminalNames.has(name)) return { kind: 'terminal', reason: name };
  return classifyAt(value['cause'], options, depth + 1);
}

/** What a provider's error body says: its `type` or `code`, its message, the status they stand for. */
interface ProviderError {
  type?: string;
  message?: string;
  status?: number;
}

/**
 * The error body inside an SDK error or a `StreamError`. An error sent inside a stream reaches the
 * caller as the SDK's `APIError` with no `status` (the HTTP response was a 200): its body's `type`
 * (Anthropic `{ type: 'error', error: { type, message } }`, OpenAI `{ type, code, message }`,
 * OpenRouter's numeric `code`) is what says whether to retry.
 */
function providerErrorOf(value: Loose): ProviderError {
  // The AI SDK's `APICallError` keeps the parsed body in `data`.
  const body = (value['error'] ?? value['body'] ?? value['data']) as Loose | undefined;
  const inner = body && typeof body === 'object' ? ((body['error'] as Loose | undefined) ?? body) : undefined;
  const read = (source: Loose | undefined, key: string) =>
    source && typeof source === 'object' ? source[key] : undefined;
  const code = read(inner, 'code');
  const type = [read(inner, 'type'), typeof code === 'string' ? code : undefined, value['type']].find(
    (candidate): candidate is string => typeof candidate === 'string' && candidate !== 'error',
  );
  const found: ProviderError = {};
  // `insufficient_quota` and `tool_use_failed` say more than the generic type beside them.
  const specific = typeof code === 'string' && code in specificCodes ? code : type;
  if (specific !== undefined) found.type = specific;
  const message = read(inner, 'message');
  if (typeof message === 'string' && message !== '') found.message = message.slice(0, 2_000);
  const status = typeof code === 'number' ? code : statusOfErrorType(found.type);
  if (status !== undefined && Number.isInteger(status) && status >= 100 && status < 600)
    found.status = status;
  return found;
}

/** Error codes whose meaning overrides the HTTP status they came with. */
const specificCodes: { readonly [code: string]: ErrorClass } = {
  // Out of credit: billing, not load. Retrying only burns the retry budget.
  insufficient_quota: 'terminal',
  billing_hard_limit_reached: 'terminal',
  // Groq: the model produced a tool call that did not parse; a new sample usually does.
  tool_use_failed: 'transient',
};

function classifyProvider(
  status: number | undefined,
  provider: ProviderError,
  headers: unknown,
  options: ClassifyOptions,
): Classification | undefined {
  const reason = provider.type ?? `status ${status}`;
  const base = status === undefined ? { reason } : { status, reason };
  const specific = provider.type === undefined ? undefined : specificCodes[provider.type];
  if (specific === 'terminal') return { kind: 'terminal', ...base };
  const retryAfterMs = retryAfterOf(headers, options);
  // The server's own word beats the status: `x-should-retry` (both SDKs honour it).
  const should = header(headers, 'x-should-retry');
  if (should === 'false') return { kind: 'terminal', ...base };
  if (specific === 'transient') return withRetryAfter({ kind: 'transient', ...base }, retryAfterMs);
  if (status === undefined)
    return should === 'true' ? withRetryAfter({ kind: 'transient', ...base }, retryAfterMs) : undefined;
  if (throttledStatuses.has(status)) return withRetryAfter({ kind: 'throttled', ...base }, retryAfterMs);
  if (transientStatuses.has(status) || should === 'true')
    return withRetryAfter({ kind: 'transient', ...base }, retryAfterMs);
  if (status >= 200 && status < 300) return undefined;
  return { kind: 'terminal', ...base };
}

function withRetryAfter(classification: Classification, retryAfterMs: number | undefined): Classification {
  return retryAfterMs === undefined ? classification : { ...classification, retryAfterMs };
}

function statusOf(value: Loose): number | undefined {
  for (const candidate of [
    value['status'],
    value['statusCode'],
    (value['response'] as Loose | undefined)?.['status'],
  ]) {
    if (typeof candidate === 'number' && Number.isInteger(candidate) && candidate >= 100 && candidate < 600)
      return candidate;
  }
  return undefined;
}

function headersOf(value: Loose): unknown {
  // The AI SDK's APICallError keeps them in `responseHeaders`.
  return (
    value['headers'] ?? value['responseHeaders'] ?? (value['response'] as Loose | undefined)?.['headers']
  );
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const getter = (headers as { get?: unknown }).get;
  if (typeof getter === 'function') {
    const found = (getter as (key: string) => unknown).call(headers, name);
    return typeof found === 'string' ? found : undefined;
  }
  for (const [key, found] of Object.entries(headers)) {
    if (key.toLowerCase() === name)
      return Array.isArray(found) ? String(found[0]) : typeof found === 'string' ? found : undefined;
  }
  return undefined;
}

/**
 * The wait a response asks for: `retry-after-ms` (milliseconds), else `Retry-After` as seconds or an
 * HTTP date. A date in the past means 0; a malformed or absent header means undefined. Capped.
 */
export function retryAfterOf(headers: unknown, options: ClassifyOptions = {}): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return capped(Number(ms), options);
  const value = header(headers, 'retry-after');
  if (value === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return capped(Number(value) * 1_000, options);
  const date = Date.parse(value);
  if (Number.isNaN(date) || !/[a-z]/i.test(value)) return undefined;
  return capped(Math.max(0, date - (options.now ?? Date.now)()), options);
}

function capped(ms: number, options: ClassifyOptions): number {
  return Math.min(Math.max(0, ms), options.maxRetryAfterMs ?? 60_000);
}
