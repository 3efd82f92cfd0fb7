import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { Clock } from '../time/clock.js';
import { monotonicClock, monotonicView } from '../time/monotonic-clock.js';
import {
  type BreakerStrategy,
  type BreakerStrategyState,
  consecutiveFailures,
  strategyFromJSON,
} from './breaker-strategy.js';

/** A breaker's answer to one call. */
export type BreakerPermit =
  | { kind: 'allowed'; probe: boolean }
  /** Fail fast: no attempt, no spend. */
  | { kind: 'open'; retryInMs: number };

/**
 * A circuit breaker per dependency. In-process here; `reins/redis` shares one across a fleet with
 * the same interface.
 */
export interface Breaker {
  acquire(): BreakerPermit | Promise<BreakerPermit>;
  /** Report how an allowed call went. Only failures of the dependency count (not a 400). */
  record(permit: BreakerPermit, ok: boolean): void | Promise<void>;
}

export type BreakerStatus = 'closed' | 'open' | 'half_open';

/** A saved breaker, versioned so old saves keep loading. */
export interface BreakerSnapshot {
  version: 1;
  status: BreakerStatus;
  openedAtMs: number | null;
  probeStartedAtMs: number | null;
  opens: number;
  strategy: BreakerStrategyState;
}

export interface CircuitBreakerOptions {
  /** @default consecutiveFailures(5) */
  strategy?: BreakerStrategy;
  /** How long the circuit stays open before one probe may test the dependency (finite, ≥ 0). @default 30_000 */
  cooldownMs?: number;
  /** A probe that never reports back frees its slot after this long (finite, ≥ 0). @default cooldownMs */
  probeTimeoutMs?: number;
  /**
   * Read through a monotonic view: a clock that steps back does not stretch the cooldown.
   * @default monotonicClock
   */
  clock?: Clock;
}

/** A finite number of milliseconds ≥ 0, or a `ConfigurationError` naming the option. */
export function durationOption(option: string, value: number): number {
  if (!(typeof value === 'number' && value >= 0 && value < Number.POSITIVE_INFINITY))
    throw new ConfigurationError(option, `must be a finite number of milliseconds ≥ 0, got ${String(value)}`);
  return value;
}

/**
 * The in-process breaker: closed → open (fail fast for `cooldownMs`) → half-open (exactly one
 * probe; the others still fail fast) → closed on a good probe, open again on a bad one.
 */
export class CircuitBreaker implements Breaker {
  readonly #clock: Clock;
  readonly #cooldownMs: number;
  readonly #probeTimeoutMs: number;
  #strategy: BreakerStrategy;
  #status: BreakerStatus = 'closed';
  #openedAt: number | null = null;
  #probeStartedAt: number | null = null;
  #opens = 0;

  constructor(options: CircuitBreakerOptions = {}) {
    // Cooldowns are durations: wall-clock steps must not stretch them.
    this.#clock = monotonicView(options.clock ?? monotonicClock);
    this.#cooldownMs = durationOption('cooldownMs', options.cooldownMs ?? 30_000);
    this.#probeTimeoutMs = durationOption('probeTimeoutMs', options.probeTimeoutMs ?? this.#cooldownMs);
    this.#strategy = options.strategy ?? consecutiveFailures(5);
  }

  get status(): BreakerStatus {
    return this.#status;
  }

  /** How many times the circuit has opened from closed (a failed probe re-opening it does not count). */
  get opens(): number {
    return this.#opens;
  }

  acquire(): BreakerPermit {
    const now = this.#clock.now();
    if (this.#status === 'closed') return { kind: 'allowed', probe: false };
    if (this.#status === 'half_open') {
      if (this.#probeStartedAt !== null && now - this.#probeStartedAt < this.#probeTimeoutMs) {
        return { kind: 'open', retryInMs: this.#probeTimeoutMs - (now - this.#probeStartedAt) };
      }
      this.#probeStartedAt = now;
      return { kind: 'allowed', probe: true };
    }
    const waited = now - (this.#openedAt ?? now);
    if (waited < this.#cooldownMs) return { kind: 'open', retryInMs: this.#cooldownMs - waited };
    this.#status = 'half_open';
    this.#probeStartedAt = now;
    return { kind: 'allowed', probe: true };
  }

  record(permit: BreakerPermit, ok: boolean): void {
    if (permit.kind !== 'allowed') return;
    const now = this.#clock.now();
    if (permit.probe) {
      if (ok) {
        this.#status = 'closed';
        this.#strategy = this.#strategy.reset();
        this.#openedAt = null;
      } else {
        this.#open(now, false);
      }
      this.#probeStartedAt = null;
      return;
    }
    if (this.#status !== 'closed') return;
    this.#strategy = this.#strategy.record(ok, now);
    if (this.#strategy.tripped) this.#open(now, true);
  }

  snapshot(): BreakerSnapshot {
    return {
      version: 1,
      status: this.#status,
      openedAtMs: this.#openedAt,
      probeStartedAtMs: this.#probeStartedAt,
      opens: this.#opens,
      strategy: this.#strategy.toJSON(),
    };
  }

  /** A breaker in the state a snapshot saved. */
  static restore(
    snapshot: BreakerSnapshot,
    options: Omit<CircuitBreakerOptions, 'strategy'> = {},
  ): CircuitBreaker {
    if (snapshot?.version !== 1)
      throw new ReinsError(
        'unsupported_state_version',
        `breaker snapshot version ${String(snapshot?.version)} is not supported`,
      );
    const breaker = new CircuitBreaker({ ...options, strategy: strategyFromJSON(snapshot.strategy) });
    breaker.#status = snapshot.status;
    breaker.#openedAt = snapshot.openedAtMs;
    breaker.#probeStartedAt = snapshot.probeStartedAtMs;
    breaker.#opens = snapshot.opens;
    return breaker;
  }

  #open(now: number, fromClosed: boolean): void {
    this.#status = 'open';
    this.#openedAt = now;
    if (fromClosed) this.#opens++;
    this.#strategy = this.#strategy.reset();
  }
}
