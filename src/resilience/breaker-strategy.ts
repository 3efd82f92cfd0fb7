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

/** Opens after `threshold` failures in a row. */
export function consecutiveFailures(threshold = 5, failures = 0): BreakerStrategy {
  return {
    tripped: failures >= threshold,
    record: (ok) => consecutiveFailures(threshold, ok ? 0 : failures + 1),
    reset: () => consecutiveFailures(threshold, 0),
    toJSON: () => ({ type: 'consecutive', threshold, failures }),
  };
}

/**
 * Opens when at least `threshold` (0..1) of the calls in the last `windowMs` failed, once the
 * window holds `minimumCalls` (opossum's default: 50 % over 10 s).
 */
export function failureRate(
  options: { threshold?: number; windowMs?: number; minimumCalls?: number } = {},
  samples: readonly [number, 0 | 1][] = [],
): BreakerStrategy {
  const threshold = options.threshold ?? 0.5;
  const windowMs = options.windowMs ?? 10_000;
  const minimumCalls = options.minimumCalls ?? 10;
  const failures = samples.reduce((sum, [, failed]) => sum + failed, 0);
  return {
    tripped: samples.length >= minimumCalls && failures / samples.length >= threshold,
    record: (ok, nowMs) => {
      const kept = samples.filter(([at]) => at > nowMs - windowMs);
      kept.push([nowMs, ok ? 0 : 1]);
      return failureRate(options, kept);
    },
    reset: () => failureRate(options, []),
    toJSON: () => ({
      type: 'rate',
      threshold,
      windowMs,
      minimumCalls,
      samples: samples.map(([at, failed]) => [at, failed]),
    }),
  };
}

/** Rebuilds a strategy from saved data. */
export function strategyFromJSON(state: BreakerStrategyState): BreakerStrategy {
  return state.type === 'consecutive'
    ? consecutiveFailures(state.threshold, state.failures)
    : failureRate(
        { threshold: state.threshold, windowMs: state.windowMs, minimumCalls: state.minimumCalls },
        state.samples,
      );
}
