/** A thrown value reduced to plain data, safe to put in a trace or an outcome. */
export interface ErrorInfo {
  name: string;
  message: string;
  /** A `code` or `status` the error carried, if any. */
  code?: string;
  stack?: string;
  cause?: ErrorInfo;
}

/** Reads a property without letting a throwing getter or a Proxy trap escape. */
function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function text(value: unknown, limit = 2_000): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.length <= limit) return value;
  // Not inside a surrogate pair: half an emoji is not a string every store accepts (PostgreSQL's jsonb refuses it).
  const end = /[\uD800-\uDBFF]/.test(value[limit - 1] as string) ? limit - 1 : limit;
  return `${value.slice(0, end)}…`;
}

/** A short description of any value: JSON where it can be had, else a type name. Never throws. */
function describe(thrown: unknown): string {
  try {
    const json = JSON.stringify(thrown);
    if (typeof json === 'string') return text(json) as string;
  } catch {
    // Circular, a throwing toJSON, a BigInt, a Proxy: fall through to a plainer description.
  }
  try {
    if (typeof thrown === 'object' && thrown !== null && Object.getPrototypeOf(thrown) === null)
      return '[object with null prototype]';
    return text(String(thrown)) as string;
  } catch {
    return `[unprintable ${typeof thrown}]`;
  }
}

/**
 * Turns anything thrown into {@link ErrorInfo}, following `cause` a few levels. Never throws: a
 * null-prototype object, a Proxy, an Error whose `message` getter throws or a circular value is
 * described as far as it can be read.
 */
export function errorInfo(thrown: unknown, depth = 0): ErrorInfo {
  let isError = false;
  try {
    isError = thrown instanceof Error;
  } catch {
    isError = false;
  }
  if (isError) {
    const error = thrown as object;
    const info: ErrorInfo = {
      name: text(read(error, 'name'), 200) ?? 'Error',
      message: text(read(error, 'message')) ?? describe(read(error, 'message')),
    };
    const code = read(error, 'code');
    const status = read(error, 'status');
    if (typeof code === 'string' || typeof code === 'number') info.code = String(code);
    else if (typeof status === 'number') info.code = String(status);
    const stack = text(read(error, 'stack'), 20_000);
    if (stack !== undefined) info.stack = stack;
    const cause = read(error, 'cause');
    if (cause !== undefined && depth < 3) info.cause = errorInfo(cause, depth + 1);
    return info;
  }
  if (typeof thrown === 'string') return { name: 'NonError', message: text(thrown) as string };
  return { name: 'NonError', message: describe(thrown) };
}
