import { describe, expect, it } from 'vitest';
import { runAgent } from '../loop/run-agent.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { seededRandom } from '../testing/seeded-random.js';
import { exponentialBackoff } from './backoff.js';
import { consecutiveFailures } from './breaker-strategy.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { retry } from './retry.js';
import { TokenBucketRetryBudget } from './retry-budget.js';
import { retryingModel } from './retrying-model.js';
import { MemorySpendLimiter } from './spend-limiter.js';
import { TimeoutMonitor } from './timeout-monitor.js';

const status = (code: number, headers?: Record<string, string>) =>
  Object.assign(new Error(`HTTP ${code}`), { status: code, ...(headers ? { headers } : {}) });

function failing(errors: unknown[], value = 'ok') {
  let calls = 0;
  const fn = async () => {
    const error = errors[calls++];
    if (error !== undefined) throw error;
    return value;
  };
  return { fn, calls: () => calls };
}

describe('retry', () => {
  it('a terminal error fails on its first attempt and never touches budget or breaker', async () => {
    const clock = fakeClock();
    const budget = new TokenBucketRetryBudget({ clock, capacity: 3 });
    const breaker = new CircuitBreaker({ clock, strategy: consecutiveFailures(1) });
    const { fn, calls } = failing([status(400), status(400)]);
    const outcome = await retry(fn, { budget, breaker, clock, maxAttempts: 5 });
    expect(outcome).toMatchObject({
      kind: 'terminal',
      attempts: 1,
      classification: { kind: 'terminal', status: 400 },
    });
    expect(calls()).toBe(1);
    expect(budget.tokens).toBe(3);
    expect(breaker.status).toBe('closed');
  });

  it('maxAttempts counts every attempt, the first included', async () => {
    const clock = fakeClock();
    const { fn, calls } = failing([status(503), status(503), status(503), status(503)]);
    const outcome = await clock.runUntilSettled(
      retry(fn, { clock, maxAttempts: 3, random: seededRandom(1) }),
    );
    expect(outcome).toMatchObject({ kind: 'exhausted', attempts: 3 });
    expect(calls()).toBe(3);
  });

  it('honours Retry-After as max(backoff, min(hint, backoff + 5 s))', async () => {
    const clock = fakeClock();
    const waits: number[] = [];
    const { fn } = failing([status(429, { 'retry-after': '2' }), status(429, { 'retry-after': '60' })]);
    const outcome = await clock.runUntilSettled(
      retry(fn, {
        clock,
        maxAttempts: 3,
        backoff: exponentialBackoff({ baseMs: 100 }),
        onRetry: ({ delayMs }) => waits.push(delayMs),
      }),
    );
    expect(outcome.kind).toBe('ok');
    expect(waits).toEqual([2_000, 5_200]);
  });

  it('an empty budget denies the retry: the call fails now, labeled retry_denied', async () => {
    const clock = fakeClock();
    const budget = new TokenBucketRetryBudget({ clock, capacity: 1, minPerSecond: 0 });
    const first = await clock.runUntilSettled(
      retry(failing([status(503)]).fn, { clock, budget, maxAttempts: 5, random: seededRandom(2) }),
    );
    expect(first).toMatchObject({ kind: 'ok', attempts: 2 });
    const { fn, calls } = failing([status(503), status(503), status(503)]);
    const second = await clock.runUntilSettled(
      retry(fn, { clock, budget, maxAttempts: 5, random: seededRandom(3) }),
    );
    expect(second).toMatchObject({ kind: 'retry_denied', attempts: 1 });
    expect(calls()).toBe(1);
  });

  it('an open breaker fails fast with no attempt; half-open lets one probe through', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker({ clock, strategy: consecutiveFailures(2), cooldownMs: 1_000 });
    await retry(failing([status(503)]).fn, { breaker, clock, maxAttempts: 1 });
    await retry(failing([status(503)]).fn, { breaker, clock, maxAttempts: 1 });
    expect(breaker.status).toBe('open');
    const { fn, calls } = failing([]);
    expect(await retry(fn, { breaker, clock })).toMatchObject({
      kind: 'circuit_open',
      attempts: 0,
      retryInMs: 1_000,
    });
    expect(calls()).toBe(0);
    clock.advance(1_000);
    const probes = await Promise.all(Array.from({ length: 5 }, () => Promise.resolve(breaker.acquire())));
    expect(probes.filter((permit) => permit.kind === 'allowed')).toEqual([{ kind: 'allowed', probe: true }]);
    breaker.record(probes.find((permit) => permit.kind === 'allowed')!, true);
    expect(breaker.status).toBe('closed');
  });

  it('an abort during backoff settles promptly as cancelled, with no timer left', async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const { fn, calls } = failing([status(503), status(503)]);
    const pending = retry(fn, {
      clock,
      signal: controller.signal,
      backoff: exponentialBackoff({ baseMs: 10_000 }),
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(clock.pendingTimers).toBe(1);
    controller.abort('shutting down');
    expect(await pending).toMatchObject({ kind: 'cancelled', attempts: 1 });
    expect(clock.pendingTimers).toBe(0);
    expect(calls()).toBe(1);
  });
});

describe('resilience in the agent loop', () => {
  it('a model that answers 400 ends the run hard_error after one attempt, without re-planning', async () => {
    let calls = 0;
    const model = retryingModel(
      {
        name: 'flaky',
        generate: async () => {
          calls++;
          throw status(400);
        },
      },
      { maxAttempts: 5, budget: new TokenBucketRetryBudget() },
    );
    const result = await runAgent({ model, input: 'x' });
    expect(result.outcome).toMatchObject({
      kind: 'hard_error',
      source: 'model',
      error: { name: 'RetryError', message: expect.stringContaining('terminal after 1 attempt') },
    });
    expect(calls).toBe(1);
  });

  it('a model that answers 503 then recovers is retried inside the step', async () => {
    const clock = fakeClock();
    const inner = scriptedModel([{ throws: status(503) }, { text: 'fine' }]);
    const model = retryingModel(inner, { clock, random: seededRandom(5) });
    const result = await clock.runUntilSettled(runAgent({ model, input: 'x', clock }));
    expect(result.outcome).toEqual({ kind: 'answered', text: 'fine' });
    expect(result.steps).toBe(1);
  });

  it('an account spend ceiling shared by runs stops the next call before it is made', async () => {
    const limiter = new MemorySpendLimiter();
    const prices = { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } };
    const turn = { text: 'ok', usage: { inputTokens: 100_000, outputTokens: 0 } };
    // Each call bills $0.30; a run is let through while the account is under $0.55.
    const accountSpend = { limiter, accountId: 'acme', limitUsd: 0.55 };
    const first = await runAgent({
      model: scriptedModel([turn]),
      input: 'x',
      prices,
      accountSpend,
      maxContextTokens: 1e9,
    });
    const second = await runAgent({
      model: scriptedModel([turn]),
      input: 'x',
      prices,
      accountSpend,
      maxContextTokens: 1e9,
    });
    expect([first.outcome.kind, second.outcome.kind]).toEqual(['answered', 'answered']);
    const third = await runAgent({
      model: scriptedModel([turn]),
      input: 'x',
      prices,
      accountSpend,
      maxContextTokens: 1e9,
    });
    expect(third.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'account_spend_usd',
      limit: 0.55,
      phase: 'before-call',
    });
    expect(limiter.spent('acme')).toBeCloseTo(0.6, 10);
  });
});

describe('TimeoutMonitor', () => {
  it('tells a timeout set too low (near misses) from one maybe too high (none)', () => {
    const low = new TimeoutMonitor(10_000);
    for (let i = 0; i < 90; i++) low.completed();
    for (let i = 0; i < 10; i++) low.timedOut();
    for (let i = 0; i < 6; i++) low.finishedLate(11_000 + i * 200);
    low.finishedLate(25_000);
    expect(low.health()).toEqual({
      calls: 100,
      timeouts: 10,
      timeoutRate: 0.1,
      nearMisses: 6,
      nearMissShare: 0.6,
      verdict: 'too_low',
    });
    const high = new TimeoutMonitor(60_000);
    high.completed();
    high.timedOut();
    expect(high.health().verdict).toBe('maybe_too_high');
  });

  it('reads a trace: timeouts and late results', () => {
    const base = { v: 1 as const, runId: 'r', seq: 0, at: 0, step: 1, callId: 'c', tool: 'slow' };
    const monitor = TimeoutMonitor.fromTrace(
      [
        {
          ...base,
          type: 'tool-result',
          status: 'timeout',
          content: '',
          isError: true,
          resultTokens: 1,
          durationMs: 1_000,
          error: null,
        },
        { ...base, type: 'tool-late-result', settled: 'resolved', afterMs: 1_200 },
        {
          ...base,
          type: 'tool-result',
          status: 'ok',
          content: '',
          isError: false,
          resultTokens: 1,
          durationMs: 10,
          error: null,
        },
      ],
      1_000,
    );
    expect(monitor.health()).toMatchObject({ calls: 2, timeouts: 1, nearMisses: 1, verdict: 'too_low' });
  });
});
