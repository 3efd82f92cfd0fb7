import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { consecutiveFailures } from '../resilience/breaker-strategy.js';
import { CircuitBreaker } from '../resilience/circuit-breaker.js';
import { retry } from '../resilience/retry.js';
import { fakeClock } from '../testing/fake-clock.js';
import { seededRandom } from '../testing/seeded-random.js';
import { otelResilienceMetrics } from './otel-resilience-metrics.js';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const httpError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { status: code });

describe('otelResilienceMetrics', () => {
  it('counts retries by classification and status, and reports each breaker\u2019s state and opens', async () => {
    const reader = new TestReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('reins');
    const resilience = otelResilienceMetrics({ meter, dependency: 'anthropic' });
    const clock = fakeClock();
    const breaker = new CircuitBreaker({ clock, strategy: consecutiveFailures(5), cooldownMs: 60_000 });
    resilience.observeBreaker('anthropic', breaker);
    const errors = [httpError(503), httpError(503), httpError(429)];
    let calls = 0;
    const outcome = await clock.runUntilSettled(
      retry(
        async () => {
          const error = errors[calls++];
          if (error) throw error;
          return 'ok';
        },
        { clock, breaker, maxAttempts: 5, random: seededRandom(1), onRetry: resilience.onRetry },
      ),
    );
    expect(outcome.kind).toBe('ok');
    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const points = (name: string) =>
      (all.find((entry) => entry.descriptor.name === name)?.dataPoints ?? []) as {
        attributes: Record<string, unknown>;
        value: number;
      }[];
    const retries = points('reins.retries').map((point) => [
      point.attributes['http.response.status_code'],
      point.value,
    ]);
    expect(new Map(retries as [number, number][])).toEqual(
      new Map([
        [503, 2],
        [429, 1],
      ]),
    );
    expect(
      points('reins.retries').every((point) => point.attributes['reins.dependency'] === 'anthropic'),
    ).toBe(true);
    expect(points('reins.breaker.state')).toMatchObject([
      { attributes: { 'reins.dependency': 'anthropic' }, value: 0 },
    ]);

    // Five failures in a row open it; the gauge reads the breaker when collected.
    for (let i = 0; i < 5; i++) breaker.record(breaker.acquire(), false);
    const after = (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const gauge = after.find((entry) => entry.descriptor.name === 'reins.breaker.state')?.dataPoints[0];
    expect(gauge?.value).toBe(2);
    const opened = after.find((entry) => entry.descriptor.name === 'reins.breaker.opens')?.dataPoints[0];
    expect(opened?.value).toBe(1);
  });
});
