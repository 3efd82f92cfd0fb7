const toolErrorMarker = Symbol.for('reins.tool-error');

/** Options for a {@link ToolError}. */
export interface ToolErrorOptions {
  /** A stable machine-readable code (`not_found`, `rate_limited`). @default 'tool_error' */
  code?: string;
  /** Whether calling again can help: now, after a while, or never. @default 'no' */
  retry?: 'yes' | 'after' | 'no';
  retryAfterSeconds?: number;
  /** End the whole run (and abort sibling calls) instead of reporting back to the model. @default false */
  fatal?: boolean;
  /** Internal detail for the trace only; never shown to the model. */
  details?: unknown;
  cause?: unknown;
}

/**
 * An error a tool throws on purpose. Its message is written for the model: it names the condition
 * and the way forward. Anything else a tool throws is shown to the model as a generic failure with a
 * stable code, and the full error goes to the trace.
 */
export class ToolError extends Error {
  override name = 'ToolError' as const;
  readonly code: string;
  readonly retry: 'yes' | 'after' | 'no';
  readonly retryAfterSeconds: number | undefined;
  readonly fatal: boolean;
  readonly details: unknown;
  readonly [toolErrorMarker] = true;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? 'tool_error';
    this.retry = options.retry ?? 'no';
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.fatal = options.fatal ?? false;
    this.details = options.details;
  }
}

/** True for a {@link ToolError} from any copy of reins. */
export function isToolError(error: unknown): error is ToolError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[toolErrorMarker] === true
  );
}
