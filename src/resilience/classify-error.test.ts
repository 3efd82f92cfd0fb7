import { describe, expect, it } from 'vitest';
import { ToolError } from '../tools/tool-error.js';
import { classifyError, retryAfterOf } from './classify-error.js';

const withStatus = (status: number, headers?: Record<string, string>) =>
  Object.assign(new Error(`status ${status}`), { status, ...(headers ? { headers } : {}) });

describe('classifyError', () => {
  it.each([
    [408, 'transient'],
    [429, 'throttled'],
    [500, 'transient'],
    [502, 'transient'],
    [503, 'transient'],
    [504, 'transient'],
    [529, 'throttled'],
    [400, 'terminal'],
    [401, 'terminal'],
    [403, 'terminal'],
    [404, 'terminal'],
    [409, 'transient'],
    [422, 'terminal'],
    [501, 'terminal'],
  ])('status %i is %s', (status, kind) => {
    expect(classifyError(withStatus(status)).kind).toBe(kind);
  });

  it('reads SDK error shapes: APIError status + Headers, connection errors, user aborts', () => {
    const sdk429 = Object.assign(new Error('rate limited'), {
      name: 'RateLimitError',
      status: 429,
      headers: new Headers({ 'retry-after-ms': '1500' }),
    });
    expect(classifyError(sdk429)).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 1_500,
      reason: 'status 429',
    });
    const overloaded = Object.assign(new Error('Overloaded'), {
      name: 'InternalServerError',
      status: 529,
      headers: { 'retry-after': '3' },
    });
    expect(classifyError(overloaded)).toMatchObject({ kind: 'throttled', retryAfterMs: 3_000 });
    expect(
      classifyError(Object.assign(new Error('Connection error.'), { name: 'APIConnectionError' })).kind,
    ).toBe('transient');
    expect(
      classifyError(Object.assign(new Error('Request timed out.'), { name: 'APIConnectionTimeoutError' }))
        .kind,
    ).toBe('transient');
    expect(
      classifyError(Object.assign(new Error('Request was aborted.'), { name: 'APIUserAbortError' })).kind,
    ).toBe('cancelled');
    expect(classifyError(new DOMException('aborted', 'AbortError')).kind).toBe('cancelled');
  });

  it('reads fetch responses and undici/Node transport errors, following cause', () => {
    expect(classifyError({ response: { status: 503, headers: new Headers() } }).kind).toBe('transient');
    const fetchFailed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    expect(classifyError(fetchFailed)).toMatchObject({ kind: 'transient', reason: 'ECONNREFUSED' });
    expect(classifyError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })).kind).toBe(
      'transient',
    );
    expect(classifyError(new Error('socket hang up')).kind).toBe('transient');
    expect(classifyError(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' })).kind).toBe('transient');
    expect(classifyError(Object.assign(new Error('x'), { code: 'EAI_AGAIN' })).kind).toBe('transient');
    expect(
      classifyError(new Error('wrapper', { cause: new Error('inner', { cause: withStatus(502) }) })).kind,
    ).toBe('transient');
  });

  it('is terminal by default: unknown errors, validation errors, terminal tool errors', () => {
    expect(classifyError(new Error('something odd'))).toEqual({ kind: 'terminal', reason: 'unclassified' });
    expect(classifyError(Object.assign(new Error('bad'), { name: 'ZodError' })).kind).toBe('terminal');
    expect(classifyError(new ToolError('nope')).kind).toBe('terminal');
    expect(classifyError(new ToolError('busy', { retry: 'after', retryAfterSeconds: 2 }))).toMatchObject({
      kind: 'throttled',
      retryAfterMs: 2_000,
    });
    expect(classifyError('a string').kind).toBe('terminal');
    expect(classifyError(undefined).kind).toBe('terminal');
  });
});

describe('Retry-After', () => {
  const now = () => Date.parse('2026-11-29T12:00:00Z');
  it('reads seconds, milliseconds and HTTP dates, capped', () => {
    expect(retryAfterOf({ 'retry-after': '7' }, { now })).toBe(7_000);
    expect(retryAfterOf({ 'Retry-After': '0.5' }, { now })).toBe(500);
    expect(retryAfterOf({ 'retry-after': 'Sun, 29 Nov 2026 12:00:30 GMT' }, { now })).toBe(30_000);
    expect(retryAfterOf({ 'retry-after': '86400' }, { now })).toBe(60_000);
    expect(retryAfterOf({ 'retry-after': '86400' }, { now, maxRetryAfterMs: 120_000 })).toBe(120_000);
  });
  it('a date in the past is 0; malformed or absent is undefined', () => {
    expect(retryAfterOf({ 'retry-after': 'Sun, 29 Nov 2026 11:00:00 GMT' }, { now })).toBe(0);
    expect(retryAfterOf({ 'retry-after': 'soon-ish' }, { now })).toBeUndefined();
    expect(retryAfterOf({ 'retry-after': '-5' }, { now })).toBeUndefined();
    expect(retryAfterOf({}, { now })).toBeUndefined();
    expect(retryAfterOf(undefined, { now })).toBeUndefined();
  });
});
