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
  /** Why, in a few words: `status 429`, `ECONNRESET`, `aborted`, `unclassified`. */
  reason: string;
}

export interface ClassifyOptions {
  /** The longest Retry-After honoured. @default 60_000 */
  maxRetryAfterMs?: number;
  /** For Retry-After HTTP dates. @default Date.now */
  now?: () => number;
}

/** Statuses worth retrying. Everything else is terminal: retryable is an allowlist. */
export const transientStatuses: ReadonlySet<number> = new Set([408, 500, 502, 503, 504]);
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

  const status = statusOf(value);
  if (status !== undefined) {
    const retryAfterMs = retryAfterOf(headersOf(value), options);
    if (throttledStatuses.has(status))
      return withRetryAfter({ kind: 'throttled', status, reason: `status ${status}` }, retryAfterMs);
    if (transientStatuses.has(status))
      return withRetryAfter({ kind: 'transient', status, reason: `status ${status}` }, retryAfterMs);
    if (status >= 200 && status < 300) return undefined;
    return { kind: 'terminal', status, reason: `status ${status}` };
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
  return value['headers'] ?? (value['response'] as Loose | undefined)?.['headers'];
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
