const reinsErrorMarker = Symbol.for('reins.error');

/**
 * The base of every error reins throws. Expected outcomes (a step limit, a denied call) are values,
 * never exceptions; a `ReinsError` means a programmer error or a failure the caller cannot act on.
 * Check with {@link isReinsError}: it survives two copies of reins in one process.
 */
export class ReinsError extends Error {
  override name = 'ReinsError';
  readonly reason: string;
  readonly [reinsErrorMarker] = true;

  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** Thrown at call time for invalid options: a negative limit, a duplicate tool name. */
export class ConfigurationError extends ReinsError {
  override name = 'ConfigurationError' as const;
  /** The option at fault, as a dotted path (`limits.maxSteps`). */
  readonly option: string;

  constructor(option: string, message: string) {
    super('invalid_option', `${option}: ${message}`);
    this.option = option;
  }
}

/** True for any error reins threw, from this or another copy of the library. */
export function isReinsError(error: unknown): error is ReinsError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[reinsErrorMarker] === true
  );
}

/** True for a {@link ConfigurationError}, from this or another copy of the library. */
export function isConfigurationError(error: unknown): error is ConfigurationError {
  return isReinsError(error) && error.name === 'ConfigurationError';
}
