import type { TraceEvent } from '../trace/events.js';

/** What the near-miss monitor concluded about a timeout. */
export interface TimeoutHealth {
  calls: number;
  timeouts: number;
  timeoutRate: number;
  /** Timed-out calls that finished anyway within `nearMissFactor` × the timeout. */
  nearMisses: number;
  /** nearMisses ÷ timeouts: a large share means the timeout cuts off real work. */
  nearMissShare: number;
  /** `too_low`: many near misses. `maybe_too_high`: timeouts but no near misses (idle cost on true hangs). */
  verdict: 'ok' | 'too_low' | 'maybe_too_high';
}

/**
 * Prices a timeout instead of guessing it: records completions, timeouts, and when timed-out calls
 * finished after all, and says which side of the optimum the timeout sits on.
 */
export class TimeoutMonitor {
  readonly timeoutMs: number;
  readonly nearMissFactor: number;
  #calls = 0;
  #timeouts = 0;
  #nearMisses = 0;

  /** @param nearMissFactor a late finish within this multiple of the timeout is a near miss. @default 1.3 */
  constructor(timeoutMs: number, nearMissFactor = 1.3) {
    this.timeoutMs = timeoutMs;
    this.nearMissFactor = nearMissFactor;
  }

  completed(): void {
    this.#calls++;
  }

  timedOut(): void {
    this.#calls++;
    this.#timeouts++;
  }

  /** A timed-out call finished after `totalMs` from its start. */
  finishedLate(totalMs: number): void {
    if (totalMs <= this.timeoutMs * this.nearMissFactor) this.#nearMisses++;
  }

  health(): TimeoutHealth {
    const nearMissShare = this.#timeouts === 0 ? 0 : this.#nearMisses / this.#timeouts;
    const timeoutRate = this.#calls === 0 ? 0 : this.#timeouts / this.#calls;
    const verdict =
      this.#timeouts === 0
        ? 'ok'
        : nearMissShare >= 0.3
          ? 'too_low'
          : nearMissShare === 0
            ? 'maybe_too_high'
            : 'ok';
    return {
      calls: this.#calls,
      timeouts: this.#timeouts,
      timeoutRate,
      nearMisses: this.#nearMisses,
      nearMissShare,
      verdict,
    };
  }

  /** Feeds a run's trace in: tool results, timeouts, and late results. */
  static fromTrace(events: readonly TraceEvent[], timeoutMs: number, tool?: string): TimeoutMonitor {
    const monitor = new TimeoutMonitor(timeoutMs);
    for (const event of events) {
      if (tool !== undefined && 'tool' in event && event.tool !== tool) continue;
      if (event.type === 'tool-result') {
        if (event.status === 'timeout') monitor.timedOut();
        else monitor.completed();
      } else if (event.type === 'tool-late-result') monitor.finishedLate(event.afterMs);
    }
    return monitor;
  }
}
