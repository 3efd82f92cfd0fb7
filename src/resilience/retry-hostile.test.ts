import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { seededRandom } from '../testing/seeded-random.js';
import { exponentialBackoff } from './backoff.js';
import { consecutiveFailures } from './breaker-strategy.js';
import { type Breaker, CircuitBreaker } from './circuit-breaker.js';
import type { Classification } from './classify-error.js';
import { RetryError, type RetryOutcome, retry, retryOrThrow } from './retry.js';
import { type RetryBudget, TokenBucketRetryBudget } from './retry-budget.js';

const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { status: code });
const never = <T>() => new Promise<T>(() => {});

/** A value whose every trap throws: reading anything on it, or asking its prototype, fails. */
function hostileProxy(): object {
  const boom = () => {
    throw new Error('trap');
  };
  return new Proxy(
    {},
    { get: boom, has: boom, getPrototypeOf: boom, ownKeys: boom, getOwnPropertyDescriptor: boom },
  );
}

function nullPrototypeCircular(): object {
  const value = Object.create(null) as Record<string, unknown>;
  value['self'] = value;
  value['status'] = 503;
  return value;
}

function errorWithThrowingMessage(): Error {
  const error = new Error('x');
  Object.defineProperty(error, 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  return error;
}

describe('retry: a budget deposit after a success never changes the result', () => {
  it('a deposit that throws after a success returns the value, with the failure reported', async () => {
    const budget: RetryBudget = {
      withdraw: () => ({ granted: true, cost: 1, tokens: 9 }),
      deposit: async () => {
        throw new Error('budget store down');
      },
      stats: () => ({ granted: 0, denied: 0, successes: 0, createdAtMs: 0 }),
    };
    let calls = 0;
    const outcome = await retry(
      async () => {
        calls++;
        return 42;
      },
      { budget },
    );
    expect(outcome).toMatchObject({
      kind: 'ok',
      value: 42,
      attempts: 1,
      controlErrors: [
        { control: 'budget.deposit', timedOut: false, error: { message: 'budget store down' } },
      ],
    });
    expect(calls).toBe(1);
  });

  it('a deposit that hangs after a success returns the value once the control timeout passes', async () => {
    const budget: RetryBudget = {
      withdraw: () => ({ granted: true, cost: 1, tokens: 9 }),
      deposit: () => never(),
      stats: () => ({ granted: 0, denied: 0, successes: 0, createdAtMs: 0 }),
    };
    const outcome = await retry(async () => 'v', { budget, controlTimeoutMs: 10 });
    expect(outcome).toMatchObject({
      kind: 'ok',
      value: 'v',
      controlErrors: [{ control: 'budget.deposit', timedOut: true }],
    });
  });

  it('retryOrThrow returns the value when only the deposit failed', async () => {
    const budget: RetryBudget = {
      withdraw: () => ({ granted: true, cost: 1, tokens: 9 }),
      deposit: () => {
        throw new Error('down');
      },
      stats: () => ({ granted: 0, denied: 0, successes: 0, createdAtMs: 0 }),
    };
    expect(await retryOrThrow(async () => 7, { budget })).toBe(7);
  });
});

describe('retry never rejects: hostile callbacks and thrown values end in a labeled outcome', () => {
  it('an onRetry that throws is reported and the retry goes on', async () => {
    const clock = fakeClock();
    let calls = 0;
    const outcome = await clock.runUntilSettled(
      retry(
        async () => {
          if (++calls < 3) throw status(503);
          return 'done';
        },
        {
          clock,
          random: seededRandom(1),
          onRetry: () => {
            throw new Error('observer broke');
          },
        },
      ),
    );
    expect(outcome).toMatchObject({ kind: 'ok', value: 'done', attempts: 3 });
    expect(outcome.controlErrors?.map((failure) => failure.control)).toEqual(['onRetry', 'onRetry']);
  });

  it('a classifier that throws or answers nonsense makes the error terminal, not a rejection', async () => {
    const throwing = await retry(
      async () => {
        throw status(503);
      },
      {
        classify: () => {
          throw new Error('classifier broke');
        },
      },
    );
    expect(throwing).toMatchObject({
      kind: 'terminal',
      attempts: 1,
      classification: { kind: 'terminal' },
      controlErrors: [{ control: 'classify' }],
    });
    const nonsense = await retry(
      async () => {
        throw status(503);
      },
      { classify: () => ({ kind: 'maybe' }) as unknown as Classification },
    );
    expect(nonsense).toMatchObject({
      kind: 'terminal',
      attempts: 1,
      controlErrors: [{ control: 'classify' }],
    });
  });

  it('a budget whose withdraw throws or hangs denies the retry (no unfunded retry)', async () => {
    const clock = fakeClock();
    for (const withdraw of [
      () => {
        throw new Error('budget down');
      },
      () => never<never>(),
    ]) {
      const budget = { withdraw, deposit: () => {}, stats: () => ({}) } as unknown as RetryBudget;
      let calls = 0;
      const outcome = await clock.runUntilSettled(
        retry(
          async () => {
            calls++;
            throw status(503);
          },
          { clock, budget, controlTimeoutMs: 10, maxAttempts: 5 },
        ),
      );
      expect(outcome).toMatchObject({
        kind: 'retry_denied',
        attempts: 1,
        controlErrors: [{ control: 'budget.withdraw' }],
      });
      expect(calls).toBe(1);
    }
  });

  it('a breaker whose acquire throws fails closed (no attempt); one whose record throws is reported', async () => {
    const acquireThrows: Breaker = {
      acquire: () => {
        throw new Error('breaker down');
      },
      record: () => {},
    };
    let calls = 0;
    const fn = async () => {
      calls++;
      return 1;
    };
    expect(await retry(fn, { breaker: acquireThrows })).toMatchObject({
      kind: 'circuit_open',
      attempts: 0,
      controlErrors: [{ control: 'breaker.acquire' }],
    });
    expect(calls).toBe(0);
    const recordThrows: Breaker = {
      acquire: () => ({ kind: 'allowed', probe: false }),
      record: async () => {
        throw new Error('record failed');
      },
    };
    expect(await retry(fn, { breaker: recordThrows })).toMatchObject({
      kind: 'ok',
      value: 1,
      controlErrors: [{ control: 'breaker.record' }],
    });
    const hangs: Breaker = { acquire: () => never(), record: () => {} };
    expect(await retry(fn, { breaker: hangs, controlTimeoutMs: 10 })).toMatchObject({
      kind: 'circuit_open',
      controlErrors: [{ control: 'breaker.acquire', timedOut: true }],
    });
  });

  it('an abort while a control hangs settles as cancelled', async () => {
    const controller = new AbortController();
    const budget = {
      withdraw: () => never(),
      deposit: () => {},
      stats: () => ({}),
    } as unknown as RetryBudget;
    const pending = retry(
      async () => {
        throw status(503);
      },
      { budget, signal: controller.signal, controlTimeoutMs: 60_000 },
    );
    setTimeout(() => controller.abort('stop'), 5);
    expect(await pending).toMatchObject({ kind: 'cancelled', attempts: 1 });
  });

  it('an abort mid-sleep settles as cancelled', async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const pending = retry(
      async () => {
        throw status(503);
      },
      { clock, signal: controller.signal, backoff: exponentialBackoff({ baseMs: 10_000 }) },
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort(hostileProxy());
    expect(await pending).toMatchObject({ kind: 'cancelled', attempts: 1 });
  });

  it('thrown null-prototype circular objects, Proxies and Errors whose message getter throws', async () => {
    const clock = fakeClock();
    for (const thrown of [nullPrototypeCircular(), hostileProxy(), errorWithThrowingMessage()]) {
      const outcome = await clock.runUntilSettled(
        retry(
          async () => {
            throw thrown;
          },
          { clock, random: seededRandom(2), maxAttempts: 2 },
        ),
      );
      expect(['terminal', 'exhausted']).toContain(outcome.kind);
      expect(outcome).not.toHaveProperty('value');
    }
  });

  it('retryOrThrow throws a RetryError (never something else) for hostile thrown values', async () => {
    for (const thrown of [nullPrototypeCircular(), hostileProxy(), errorWithThrowingMessage(), null]) {
      const error = await retryOrThrow(
        async () => {
          throw thrown;
        },
        { maxAttempts: 1 },
      ).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RetryError);
      expect(typeof (error as RetryError).message).toBe('string');
    }
  });

  it('invalid options are a ConfigurationError naming the option', async () => {
    for (const maxAttempts of [0, 1.5, Number.NaN, -1]) {
      const error = await retry(async () => 1, { maxAttempts }).catch((caught: unknown) => caught);
      expect(isConfigurationError(error)).toBe(true);
      expect(error).toMatchObject({ option: 'maxAttempts' });
    }
  });
});

type Step =
  | { type: 'ok' }
  | {
      type: 'throw';
      value:
        | 'status503'
        | 'status429'
        | 'status400'
        | 'abort'
        | 'nullProto'
        | 'proxy'
        | 'badMessage'
        | 'null'
        | 'string';
    };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ type: 'ok' }),
  fc
    .constantFrom(
      'status503',
      'status429',
      'status400',
      'abort',
      'nullProto',
      'proxy',
      'badMessage',
      'null',
      'string',
    )
    .map((value): Step => ({ type: 'throw', value: value as Extract<Step, { type: 'throw' }>['value'] })),
);

function thrownFor(value: Extract<Step, { type: 'throw' }>['value']): unknown {
  switch (value) {
    case 'status503':
      return status(503);
    case 'status429':
      return Object.assign(status(429), { headers: { 'retry-after': '1' } });
    case 'status400':
      return status(400);
    case 'abort':
      return Object.assign(new Error('aborted'), { name: 'AbortError' });
    case 'nullProto':
      return nullPrototypeCircular();
    case 'proxy':
      return hostileProxy();
    case 'badMessage':
      return errorWithThrowingMessage();
    case 'null':
      return null;
    case 'string':
      return 'plain string';
  }
}

type Behaviour = 'fine' | 'throws' | 'hangs' | 'nonsense';
const behaviour = fc.constantFrom<Behaviour>('fine', 'throws', 'hangs', 'nonsense');

function act<T>(how: Behaviour, fine: () => T): T | Promise<T> {
  if (how === 'throws') throw new Error('hostile control');
  if (how === 'hangs') return never<T>();
  if (how === 'nonsense') return hostileProxy() as T;
  return fine();
}

describe('retry property: random results and hostile controls', () => {
  it('always resolves to a labeled outcome and never calls fn more than maxAttempts times', async () => {
    const kinds = new Set(['ok', 'terminal', 'retry_denied', 'circuit_open', 'exhausted', 'cancelled']);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          steps: fc.array(stepArbitrary, { minLength: 0, maxLength: 8 }),
          maxAttempts: fc.integer({ min: 1, max: 5 }),
          onRetry: fc.constantFrom('none', 'fine', 'throws'),
          classify: fc.constantFrom('default', 'throws', 'nonsense', 'transient'),
          withdraw: fc.option(behaviour, { nil: undefined }),
          deposit: behaviour,
          acquire: fc.option(behaviour, { nil: undefined }),
          record: behaviour,
          random: fc.constantFrom('seeded', 'throws', 'nan'),
          abortAfterMs: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        }),
        async (plan) => {
          const clock = fakeClock();
          let calls = 0;
          const fn = async () => {
            const step = plan.steps[calls++];
            if (!step || step.type === 'ok') return calls;
            throw thrownFor(step.value);
          };
          const real = new TokenBucketRetryBudget({ clock, capacity: 3 });
          const budget: RetryBudget | undefined =
            plan.withdraw === undefined
              ? undefined
              : {
                  withdraw: (kind) => act(plan.withdraw!, () => real.withdraw(kind)),
                  deposit: (grant) => act(plan.deposit, () => real.deposit(grant)),
                  stats: () => real.stats(),
                };
          const inner = new CircuitBreaker({ clock, strategy: consecutiveFailures(2), cooldownMs: 100 });
          const breaker: Breaker | undefined =
            plan.acquire === undefined
              ? undefined
              : {
                  acquire: () => act(plan.acquire!, () => inner.acquire()),
                  record: (permit, ok) => act(plan.record, () => inner.record(permit, ok)),
                };
          const seeded = seededRandom(calls + plan.steps.length);
          const controller = new AbortController();
          if (plan.abortAfterMs !== undefined)
            setTimeout(() => controller.abort(hostileProxy()), plan.abortAfterMs);
          const promise = retry(fn, {
            clock,
            maxAttempts: plan.maxAttempts,
            controlTimeoutMs: 2,
            signal: controller.signal,
            random:
              plan.random === 'seeded'
                ? seeded
                : plan.random === 'nan'
                  ? () => Number.NaN
                  : () => {
                      throw new Error('random broke');
                    },
            ...(budget ? { budget } : {}),
            ...(breaker ? { breaker } : {}),
            ...(plan.onRetry === 'none'
              ? {}
              : {
                  onRetry: () => {
                    if (plan.onRetry === 'throws') throw hostileProxy();
                  },
                }),
            ...(plan.classify === 'default'
              ? {}
              : {
                  classify: (): Classification => {
                    if (plan.classify === 'throws') throw new Error('classifier broke');
                    if (plan.classify === 'nonsense') return hostileProxy() as Classification;
                    return { kind: 'transient', reason: 'test' };
                  },
                }),
          });
          let outcome: RetryOutcome<number> | undefined;
          let rejected: unknown;
          await clock.runUntilSettled(promise).then(
            (value) => {
              outcome = value;
            },
            (error: unknown) => {
              rejected = error ?? 'rejected';
            },
          );
          expect(rejected).toBeUndefined();
          expect(kinds.has(outcome!.kind)).toBe(true);
          expect(calls).toBeLessThanOrEqual(plan.maxAttempts);
          expect(outcome!.attempts).toBe(calls);
          if (outcome!.kind === 'ok') expect(outcome!.value).toBe(calls);
        },
      ),
      { numRuns: 300 },
    );
  }, 60_000);
});
