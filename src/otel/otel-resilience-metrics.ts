import { type Meter, metrics } from '@opentelemetry/api';
import type { BreakerStatus } from '../resilience/circuit-breaker.js';
import type { RetryOptions } from '../resilience/retry.js';

/** A breaker whose state can be read: `CircuitBreaker` from `reins/resilience` is one. */
export interface ObservableBreaker {
  readonly status: BreakerStatus;
  readonly opens: number;
}

/** Options for {@link otelResilienceMetrics}. */
export interface OtelResilienceMetricsOptions {
  /** @default metrics.getMeter('reins') */
  meter?: Meter;
}

/** What {@link otelResilienceMetrics} gives back: an `onRetry` to pass to a retry policy, and breaker registration. */
export interface OtelResilienceMetrics {
  /**
   * Pass as `retry(fn, { onRetry })` or `retryingModel(model, { onRetry })`: counts each retry in
   * `reins.retries` by `reins.dependency`, `error.type` (the classification) and HTTP status.
   */
  onRetry: NonNullable<RetryOptions['onRetry']>;
  /** Reports a breaker's state as the `reins.breaker.state` gauge (0 closed, 1 half open, 2 open) and its opens. */
  observeBreaker(dependency: string, breaker: ObservableBreaker): void;
}

const statusValue: Record<BreakerStatus, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * Retries and breaker state as OpenTelemetry metrics: the resilience layer's decisions beside the
 * run's (`otelTraceSink`). Retries are counted as they are scheduled; each registered breaker is
 * read when the metrics are collected, so an open circuit shows on the dashboard that reads it.
 *
 * @example
 * const resilience = otelResilienceMetrics();
 * const breaker = new CircuitBreaker();
 * resilience.observeBreaker('anthropic', breaker);
 * // retryingModel(model, { breaker, onRetry: resilience.onRetry })
 */
export function otelResilienceMetrics(
  options: OtelResilienceMetricsOptions & { dependency?: string } = {},
): OtelResilienceMetrics {
  const meter = options.meter ?? metrics.getMeter('reins');
  const dependency = options.dependency ?? 'model';
  const retries = meter.createCounter('reins.retries', {
    description:
      'Retries scheduled, by reins.dependency, error.type (the classification) and http.response.status_code.',
    unit: '{retry}',
  });
  const breakers = new Map<string, ObservableBreaker>();
  const state = meter.createObservableGauge('reins.breaker.state', {
    description: 'Circuit breaker state by reins.dependency: 0 closed, 1 half open, 2 open.',
    unit: '1',
  });
  const opens = meter.createObservableCounter('reins.breaker.opens', {
    description: 'Times each breaker opened, by reins.dependency.',
    unit: '{open}',
  });
  meter.addBatchObservableCallback(
    (observer) => {
      for (const [name, breaker] of breakers) {
        const attributes = { 'reins.dependency': name };
        const status = breaker.status;
        if (status in statusValue) observer.observe(state, statusValue[status], attributes);
        if (Number.isFinite(breaker.opens)) observer.observe(opens, breaker.opens, attributes);
      }
    },
    [state, opens],
  );
  return {
    onRetry: (event) => {
      const attributes: Record<string, string | number> = {
        'reins.dependency': dependency,
        'error.type': event.classification.kind,
      };
      if (event.classification.status !== undefined)
        attributes['http.response.status_code'] = event.classification.status;
      retries.add(1, attributes);
    },
    observeBreaker(name, breaker) {
      breakers.set(name, breaker);
    },
  };
}
