import { describe, expect, it } from 'vitest';
import type { PriceTable } from '../../src/controls/price.js';
import { runAgent } from '../../src/loop/run-agent.js';
import type { Model, ModelRequest, ModelResponse } from '../../src/model/model.js';
import { exponentialBackoff } from '../../src/resilience/backoff.js';
import { consecutiveFailures } from '../../src/resilience/breaker-strategy.js';
import { CircuitBreaker } from '../../src/resilience/circuit-breaker.js';
import { retryingModel } from '../../src/resilience/retrying-model.js';
import { type CascadeResponse, cascadeModel } from '../../src/routing/cascade-model.js';
import { anyTrigger } from '../../src/routing/escalation-trigger.js';
import { judgeTrigger } from '../../src/routing/judge-trigger.js';
import { structuralTrigger } from '../../src/routing/structural-trigger.js';

const prices: PriceTable = {
  cheap: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 5 },
  strong: { inputUsdPerMillionTokens: 15, outputUsdPerMillionTokens: 75 },
  judge: { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 },
};
const usage = { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 };

function model(name: string, answer: (calls: number) => ModelResponse | Error): Model & { calls: number } {
  const m = {
    name,
    calls: 0,
    async generate(_request: ModelRequest): Promise<ModelResponse> {
      m.calls++;
      const out = answer(m.calls);
      if (out instanceof Error) throw out;
      return out;
    },
  };
  return m;
}
const text = (t: string, model?: string): ModelResponse => ({
  content: [{ type: 'text', text: t }],
  stopReason: 'end_turn',
  usage,
  ...(model ? { model } : {}),
});

describe('review: routing billing', () => {
  it('bills the cheap call and the judge when the strong tier (no breaker) throws', async () => {
    const cheap = model('cheap', () => text('meh'));
    const judge = model('judge', () => text('{"score": 0.1}'));
    const strong = model('strong', () => Object.assign(new Error('bad request'), { status: 400 }));
    const cascade = cascadeModel({
      tiers: [cheap, strong],
      escalate: judgeTrigger({ judge, threshold: 0.7 }),
    });
    const result = await runAgent({ model: cascade, input: 'hi', prices });
    expect(cheap.calls).toBe(1);
    expect(judge.calls).toBe(1);
    // Two paid calls were made (cheap 0.0015 + judge 0.0045); the run's bill must show them.
    expect(result.costUsd).toBeGreaterThan(0);
    expect(result.billedTokens).toBeGreaterThanOrEqual(2200);
  });

  it('a retry around the strong tier retries it inside the cascade; the bill holds every call', async () => {
    const cheap = model('cheap', () => text('meh'));
    const judge = model('judge', () => text('{"score": 0.1}'));
    const strong = model('strong', (n) =>
      n < 3 ? Object.assign(new Error('overloaded'), { status: 529 }) : text('fine', 'strong'),
    );
    const cascade = cascadeModel({
      tiers: [
        cheap,
        retryingModel(strong, { maxAttempts: 3, backoff: exponentialBackoff({ baseMs: 1, capMs: 1 }) }),
      ],
      escalate: judgeTrigger({ judge, threshold: 0.7 }),
    });
    const result = await runAgent({ model: cascade, input: 'hi', prices });
    expect(result.outcome.kind).toBe('answered');
    expect(cheap.calls).toBe(1);
    expect(judge.calls).toBe(1);
    expect(strong.calls).toBe(3);
    // cheap 0.0015 + judge 0.0045 + strong 0.0225 (its failed attempts answered nothing billable)
    expect(result.costUsd).toBeCloseTo(0.0285, 6);
  });

  it('a strong tier that fails after the cheap answer was paid for returns that answer, degraded and billed', async () => {
    const cheap = model('cheap', () => text('meh'));
    const judge = model('judge', () => text('{"score": 0.1}'));
    const strong = model('strong', () => Object.assign(new Error('overloaded'), { status: 529 }));
    const cascade = cascadeModel({
      tiers: [cheap, strong],
      escalate: judgeTrigger({ judge, threshold: 0.7 }),
    });
    const wrapped = retryingModel(cascade, {
      maxAttempts: 3,
      backoff: exponentialBackoff({ baseMs: 1, capMs: 1 }),
    });
    const result = await runAgent({ model: wrapped, input: 'hi', prices });
    expect(result.outcome.kind).toBe('answered');
    // One cascade call: nothing was thrown for the retry to repeat unbilled.
    expect(cheap.calls).toBe(1);
    expect(judge.calls).toBe(1);
    expect(result.costUsd).toBeCloseTo(0.006, 6);
  });

  it('prices the answering tier when its response names no model (as it does the tiers escalated from)', async () => {
    const cheap = model('cheap', () => text('meh'));
    const strong = model('strong', () => text('a long enough answer'));
    const cascade = cascadeModel({ tiers: [cheap, strong], escalate: structuralTrigger({ minChars: 10 }) });
    const result = await runAgent({ model: cascade, input: 'hi', prices });
    expect(strong.calls).toBe(1);
    // cheap 0.0015 (billed, by tier name) + strong 0.0225 (missing: priced by the cascade's name)
    expect(result.costUsd).toBeCloseTo(0.024, 6);
  });

  it('a judge that throws escalates (or at least does not discard the strong tier)', async () => {
    const cheap = model('cheap', () => text('meh'));
    const judge = model('judge', () => Object.assign(new Error('judge provider down'), { status: 503 }));
    const strong = model('strong', () => text('good answer'));
    const cascade = cascadeModel({
      tiers: [cheap, strong],
      escalate: judgeTrigger({ judge, threshold: 0.7 }),
    });
    const response = await cascade.generate({
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
      tools: [],
      toolChoice: 'auto',
    });
    expect(strong.calls).toBe(1);
    expect(response.content).toEqual([{ type: 'text', text: 'good answer' }]);
  });

  it('a refusal pattern escalates every refusal, not every other one (a /g pattern)', async () => {
    const escalate = anyTrigger(structuralTrigger({ refusalPatterns: [/I can(?:'|no)t help/gi] }));
    const request: ModelRequest = {
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
      tools: [],
      toolChoice: 'auto',
    };
    const verdicts = [];
    for (let i = 0; i < 2; i++)
      verdicts.push(
        (await escalate.check({ request, response: text("Sorry, I can't help with that."), tier: 0 })).kind,
      );
    expect(verdicts).toEqual(['escalate', 'escalate']);
  });

  for (const stopReason of ['interrupted', 'context_window_exceeded'] as const)
    it(`the default structural trigger escalates a cheap answer that stopped with ${stopReason}`, async () => {
      const cheap = model('cheap', () => ({
        content: [{ type: 'text', text: 'The answer is' }],
        stopReason,
        usage,
      }));
      const strong = model('strong', () => text('The answer is 42.', 'strong'));
      const cascade = cascadeModel({ tiers: [cheap, strong], escalate: structuralTrigger() });
      const result = await runAgent({ model: cascade, input: 'hi', prices });
      expect(strong.calls).toBe(1);
      expect(result.outcome.kind).toBe('answered');
    });

  it("a caller's cancellations do not open a tier's circuit breaker", async () => {
    const cheap = {
      name: 'cheap',
      calls: 0,
      generate(request: ModelRequest): Promise<ModelResponse> {
        cheap.calls++;
        if (cheap.calls > 2) return Promise.resolve(text('a fine cheap answer', 'cheap'));
        return new Promise((_, reject) =>
          request.signal?.addEventListener('abort', () =>
            reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
          ),
        );
      },
    };
    const strong = model('strong', () => text('strong answer', 'strong'));
    const breaker = new CircuitBreaker({ strategy: consecutiveFailures(2), cooldownMs: 60_000 });
    const cascade = cascadeModel({
      tiers: [{ model: cheap, breaker }, strong],
      escalate: structuralTrigger(),
    });
    const base: ModelRequest = {
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
      tools: [],
      toolChoice: 'auto',
    };
    for (let i = 0; i < 2; i++) {
      const controller = new AbortController();
      const pending = cascade.generate({ ...base, signal: controller.signal });
      controller.abort();
      await expect(pending).rejects.toThrow();
    }
    // Two users pressed cancel; the cheap provider is healthy.
    const response = (await cascade.generate(base)) as CascadeResponse;
    expect(response.routing.answeredBy.name).toBe('cheap');
  });

  it('a request-specific 400 from a tier does not open its breaker for every later request', async () => {
    const cheap = model('cheap', (n) =>
      n <= 2
        ? Object.assign(new Error('prompt too long for this model'), { status: 400 })
        : text('a fine cheap answer', 'cheap'),
    );
    const strong = model('strong', () => text('strong answer', 'strong'));
    const breaker = new CircuitBreaker({ strategy: consecutiveFailures(2), cooldownMs: 60_000 });
    const cascade = cascadeModel({
      tiers: [{ model: cheap, breaker }, strong],
      escalate: structuralTrigger(),
    });
    const base: ModelRequest = {
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
      tools: [],
      toolChoice: 'auto',
    };
    // A 400 before any tier answered is the caller's (the next tier would get the same request).
    await expect(cascade.generate(base)).rejects.toThrow(/too long/);
    await expect(cascade.generate(base)).rejects.toThrow(/too long/);
    const response = (await cascade.generate(base)) as CascadeResponse;
    // retryOrThrow's rule: "A 400 says the dependency is up … it must not open the circuit".
    expect(response.routing.answeredBy.name).toBe('cheap');
  });
});
