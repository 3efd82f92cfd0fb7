import { ConfigurationError } from '../errors/reins-error.js';

/**
 * When a breaker opens. Immutable: `record` returns the strategy after one more call.
 */
export interface BreakerStrategy {
  readonly tripped: boolean;
  record(ok: boolean, nowMs: number): BreakerStrategy;
  /** The strategy with its history cleared, after the breaker closes again. */
  reset(): BreakerStrategy;
  /** Plain data, for saving a breaker's state. */
  toJSON(): BreakerStrategyState;
}

export type BreakerStrategyState =
  | { type: 'consecutive'; threshold: number; failures: number }
  | { type: 'rate'; threshold: number; windowMs: number; minimumCalls: number; samples: [number, 0 | 1][] };

/** Opens after `threshold` failures in a row (a whole number ≥ 1). */
export function consecutiveFailures(threshold = 5, failures = 0): BreakerStrategy {
  if (!(Number.isInteger(threshold) && threshold >= 1))
    throw new ConfigurationError(
      'consecutiveFailures.threshold',
      `must be a whole number ≥ 1, got ${threshold}`,
    );
  if (!(Number.isInteger(failures) && failures >= 0))
    throw new ConfigurationError(
      'consecutiveFailures.failures',
      `must be a whole number ≥ 0, got ${failures}`,
    );
  return consecutive(threshold, failures);
}

function consecutive(threshold: number, failures: number): BreakerStrategy {
  return {
    tripped: failures >= threshold,
    record: (ok) => consecutive(threshold, ok ? 0 : failures + 1),
    reset: () => consecutive(threshold, 0),
    toJSON: () => ({ type: 'consecutive', threshold, failures }),
  };
}

/**
 * Opens when at least `threshold` (0 < threshold ≤ 1) of the calls in the last `windowMs` failed,
 * once the window holds `minimumCalls` (opossum's default: 50 % over 10 s).
 */
export function failureRate(
  options: { threshold?: number; windowMs?: number; minimumCalls?: number } = {},
  samples: readonly [number, 0 | 1][] = [],
): BreakerStrategy {
  const threshold = options.threshold ?? 0.5;
  const windowMs = options.windowMs ?? 10_000;
  const minimumCalls = options.minimumCalls ?? 10;
  if (!(threshold > 0 && threshold <= 1))
    throw new ConfigurationError('failureRate.threshold', `must be a share in (0, 1], got ${threshold}`);
  if (!(windowMs > 0 && windowMs < Number.POSITIVE_INFINITY))
    throw new ConfigurationError('failureRate.windowMs', `must be a finite number > 0, got ${windowMs}`);
  if (!(Number.isInteger(minimumCalls) && minimumCalls >= 1))
    throw new ConfigurationError(
      'failureRate.minimumCalls',
      `must be a whole number ≥ 1, got ${minimumCalls}`,
    );
  if (!Array.isArray(samples))
    throw new ConfigurationError('failureRate.samples', 'must be an array of [atMs, 0 | 1]');
  return rate({ threshold, windowMs, minimumCalls }, samples);
}

function rate(
  options: { threshold: number; windowMs: number; minimumCalls: number },
  samples: readonly [number, 0 | 1][],
): BreakerStrategy {
  const { threshold, windowMs, minimumCalls } = options;
  const failures = samples.reduce((sum, [, failed]) => sum + failed, 0);
  return {
    tripped: samples.length >= minimumCalls && failures / samples.length >= threshold,
    record: (ok, nowMs) => {
      const kept = samples.filter(([at]) => at > nowMs - windowMs);
      kept.push([nowMs, ok ? 0 : 1]);
      return rate(options, kept);
    },
    reset: () => rate(options, []),
    toJSON: () => ({
      type: 'rate',
      threshold,
      windowMs,
      minimumCalls,
      samples: samples.map(([at, failed]) => [at, failed]),
    }),
  };
}

/** Rebuilds a strategy from saved data; values out of range are a `ConfigurationError`. */
export function strategyFromJSON(state: BreakerStrategyState): BreakerStrategy {
  return state.type === 'consecutive'
    ? consecutiveFailures(state.threshold, state.failures)
    : failureRate(
        { threshold: state.threshold, windowMs: state.windowMs, minimumCalls: state.minimumCalls },
        state.samples,
      );
}
