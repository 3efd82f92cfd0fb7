import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { consecutiveFailures, failureRate } from './breaker-strategy.js';
import { CircuitBreaker } from './circuit-breaker.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('circuit breaker clock', () => {
  it('by default a backward step of the wall clock does not keep the circuit open past its cooldown', async () => {
    const breaker = new CircuitBreaker({ strategy: consecutiveFailures(1), cooldownMs: 30 });
    breaker.record(breaker.acquire(), false);
    expect(breaker.status).toBe('open');
    // The system clock steps back an hour (NTP correction, VM resume).
    const stepped = Date.now() - 3_600_000;
    vi.spyOn(Date, 'now').mockImplementation(() => stepped);
    await settle(60);
    expect(breaker.acquire()).toEqual({ kind: 'allowed', probe: true });
  });

  it('an injected clock that steps back does not keep the circuit open past its cooldown', () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker({ clock, strategy: consecutiveFailures(1), cooldownMs: 1_000 });
    breaker.record(breaker.acquire(), false);
    clock.advance(400);
    expect(breaker.acquire()).toEqual({ kind: 'open', retryInMs: 600 });
    clock.set(clock.now() - 3_600_000);
    expect(breaker.acquire()).toEqual({ kind: 'open', retryInMs: 600 });
    clock.advance(600);
    expect(breaker.acquire()).toEqual({ kind: 'allowed', probe: true });
  });

  it('a failure-rate window is not stretched by a backward step', () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker({
      clock,
      strategy: failureRate({ threshold: 0.5, windowMs: 1_000, minimumCalls: 2 }),
    });
    breaker.record(breaker.acquire(), false);
    clock.set(clock.now() - 3_600_000);
    expect(breaker.acquire()).toEqual({ kind: 'allowed', probe: false });
    clock.advance(1_000);
    // The first failure is a full window old: one more failure alone does not trip it.
    breaker.record(breaker.acquire(), false);
    expect(breaker.status).toBe('closed');
  });
});

describe('breaker options are validated', () => {
  const bad = [Number.NaN, -1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
  const expectOption = (build: () => unknown, option: string) => {
    let caught: unknown;
    try {
      build();
    } catch (error) {
      caught = error;
    }
    expect(caught, option).toBeInstanceOf(ConfigurationError);
    expect((caught as ConfigurationError).option).toBe(option);
  };

  it('cooldowns and probe timeouts', () => {
    for (const value of bad) {
      expectOption(() => new CircuitBreaker({ cooldownMs: value }), 'cooldownMs');
      expectOption(() => new CircuitBreaker({ probeTimeoutMs: value }), 'probeTimeoutMs');
      expectOption(
        () => CircuitBreaker.restore(new CircuitBreaker().snapshot(), { cooldownMs: value }),
        'cooldownMs',
      );
    }
    expect(() => new CircuitBreaker({ cooldownMs: 0 })).not.toThrow();
  });

  it('thresholds, windows and minimum-call counts', () => {
    for (const value of [...bad, 0, 1.5])
      expectOption(() => consecutiveFailures(value), 'consecutiveFailures.threshold');
    for (const value of [...bad, 0, 1.5])
      expectOption(() => failureRate({ threshold: value }), 'failureRate.threshold');
    for (const value of [...bad, 0])
      expectOption(() => failureRate({ windowMs: value }), 'failureRate.windowMs');
    for (const value of [...bad, 0, 2.5])
      expectOption(() => failureRate({ minimumCalls: value }), 'failureRate.minimumCalls');
    expect(() => failureRate({ threshold: 1, windowMs: 1, minimumCalls: 1 })).not.toThrow();
    expect(() => consecutiveFailures(1)).not.toThrow();
  });
});
