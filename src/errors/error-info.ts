/** A thrown value reduced to plain data, safe to put in a trace or an outcome. */
export interface ErrorInfo {
  name: string;
  message: string;
  /** A `code` or `status` the error carried, if any. */
  code?: string;
  stack?: string;
  cause?: ErrorInfo;
}

/** Turns anything thrown into {@link ErrorInfo}, following `cause` a few levels. */
export function errorInfo(thrown: unknown, depth = 0): ErrorInfo {
  if (thrown instanceof Error) {
    const info: ErrorInfo = { name: thrown.name, message: thrown.message };
    const withCode = thrown as Error & { code?: unknown; status?: unknown };
    if (typeof withCode.code === 'string' || typeof withCode.code === 'number')
      info.code = String(withCode.code);
    else if (typeof withCode.status === 'number') info.code = String(withCode.status);
    if (thrown.stack !== undefined) info.stack = thrown.stack;
    if (thrown.cause !== undefined && depth < 3) info.cause = errorInfo(thrown.cause, depth + 1);
    return info;
  }
  if (typeof thrown === 'string') return { name: 'NonError', message: thrown };
  let message: string;
  try {
    message = JSON.stringify(thrown) ?? String(thrown);
  } catch {
    message = String(thrown);
  }
  return { name: 'NonError', message };
}
