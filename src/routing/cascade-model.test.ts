import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PriceTable } from '../controls/price.js';
import { isReinsError } from '../errors/reins-error.js';
import { runAgent } from '../loop/run-agent.js';
import type { ModelRequest } from '../model/model.js';
import { consecutiveFailures } from '../resilience/breaker-strategy.js';
import { CircuitBreaker } from '../resilience/circuit-breaker.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { renderTrace } from '../trace/render.js';
import { memoryTraceSink } from '../trace/sink.js';
import { type CascadeResponse, cascadeModel } from './cascade-model.js';
import { cascadeRecordOf } from './cascade-record.js';
import { confidenceTrigger } from './confidence-trigger.js';
import { anyTrigger } from './escalation-trigger.js';
import { judgeTrigger } from './judge-trigger.js';
import { structuralTrigger } from './structural-trigger.js';

const request: ModelRequest = {
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 2?' }] }],
  tools: [
    {
      name: 'search',
      description: 'search',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  ],
  toolChoice: 'auto',
};
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });
const prices: PriceTable = {
  cheap: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 5 },
  strong: { inputUsdPerMillionTokens: 15, outputUsdPerMillionTokens: 75 },
  judge: { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 },
};

describe('cascadeModel', () => {
  it('keeps a cheap answer the trigger accepts and never calls the strong tier', async () => {
    const cheap = scriptedModel([{ text: '4, confidence: 0.95', usage: usage(100, 10) }], { name: 'cheap' });
    const strong = scriptedModel([], { name: 'strong' });
    const model = cascadeModel({
      tiers: [cheap, strong],
      escalate: confidenceTrigger({ threshold: 0.8 }),
      prices,
      clock: fakeClock(),
    });
    const response = (await model.generate(request)) as CascadeResponse;
    expect(strong.calls).toHaveLength(0);
    expect(response.routing).toMatchObject({ answeredBy: { tier: 0, name: 'cheap' }, degraded: false });
    expect(response.additionalUsage).toBeUndefined();
    expect(response.routing.attempts).toEqual([
      { kind: 'answered', tier: 0, name: 'cheap', usage: expect.any(Object), costUsd: 150e-6, durationMs: 0 },
    ]);
  });

  it('escalates with the trigger, reason and both costs, and bills the cheap call beside the answer', async () => {
    const cheap = scriptedModel([{ text: '5, confidence: 0.4', usage: usage(100, 10) }], { name: 'cheap' });
    const strong = scriptedModel([{ text: '4', usage: usage(100, 20) }], { name: 'strong' });
    const model = cascadeModel({
      tiers: [cheap, strong],
      escalate: confidenceTrigger({ threshold: 0.8 }),
      prices,
    });
    const response = (await model.generate(request)) as CascadeResponse;
    expect(response.content).toEqual([{ type: 'text', text: '4' }]);
    expect(response.routing.answeredBy).toEqual({ tier: 1, name: 'strong' });
    const [escalated, answered] = response.routing.attempts;
    expect(escalated).toMatchObject({
      kind: 'escalated',
      trigger: 'confidence',
      reason: 'confidence 0.4 below the uncalibrated threshold 0.8',
      score: 0.4,
      costUsd: 150e-6,
    });
    expect(answered).toMatchObject({ kind: 'answered', tier: 1, costUsd: 100 * 15e-6 + 20 * 75e-6 });
    expect(response.additionalUsage).toEqual([
      { model: 'cheap', usage: expect.objectContaining(usage(100, 10)) },
    ]);
  });

  it('in runAgent: the loop bills every tier at its own price and the trace records the routing', async () => {
    const cheap = scriptedModel([{ text: 'not sure', usage: usage(1000, 100) }], { name: 'cheap' });
    const strong = scriptedModel([{ text: 'The answer is 4.', usage: usage(1000, 100) }], { name: 'strong' });
    const trace = memoryTraceSink();
    const result = await runAgent({
      model: cascadeModel({ tiers: [cheap, strong], escalate: structuralTrigger({ minChars: 10 }) }),
      input: 'What is 2 + 2?',
      prices,
      trace,
    });
    const cheapUsd = (1000 * 1 + 100 * 5) / 1e6;
    const strongUsd = (1000 * 15 + 100 * 75) / 1e6;
    expect(result.costUsd).toBeCloseTo(cheapUsd + strongUsd, 12);
    const event = trace.events.find((e) => e.type === 'model-response');
    const record = event?.type === 'model-response' ? cascadeRecordOf(event.response) : undefined;
    expect(record?.answeredBy).toEqual({ tier: 1, name: 'strong' });
    expect(record?.attempts[0]).toMatchObject({
      kind: 'escalated',
      trigger: 'structural',
      reason: '8 characters, fewer than 10',
    });
    expect(renderTrace(trace.events)).toContain(
      'routed  cheap escalated (structural: 8 characters, fewer than 10) → strong answered',
    );
  });

  it('counts a judge call in the bill and in the escalation record', async () => {
    const cheap = scriptedModel([{ text: 'maybe 5', usage: usage(100, 10) }], { name: 'cheap' });
    const strong = scriptedModel([{ text: '4', usage: usage(100, 10) }], { name: 'strong' });
    const judge = scriptedModel([{ text: '{"score": 0.2}', usage: usage(50, 5) }], { name: 'judge' });
    const model = cascadeModel({
      tiers: [cheap, strong],
      escalate: anyTrigger(structuralTrigger(), judgeTrigger({ judge, threshold: 0.6 })),
      prices,
    });
    const response = (await model.generate(request)) as CascadeResponse;
    expect(judge.calls[0]?.messages[0]).toMatchObject({
      content: [{ text: expect.stringContaining('maybe 5') }],
    });
    expect(response.routing.attempts[0]).toMatchObject({
      trigger: 'judge',
      reason: 'judge score 0.2 below 0.6',
      triggerCostUsd: (50 * 3 + 5 * 15) / 1e6,
    });
    expect(response.additionalUsage?.map((entry) => entry.model)).toEqual(['cheap', 'judge']);
  });

  it('a judge that keeps the answer is billed too', async () => {
    const cheap = scriptedModel([{ text: '4', usage: usage(100, 10) }], { name: 'cheap' });
    const judge = scriptedModel([{ text: 'score: 0.9', usage: usage(50, 5) }], { name: 'judge' });
    const model = cascadeModel({
      tiers: [cheap, scriptedModel([])],
      escalate: judgeTrigger({ judge, threshold: 0.6 }),
    });
    const response = (await model.generate(request)) as CascadeResponse;
    expect(response.routing.answeredBy.tier).toBe(0);
    expect(response.additionalUsage).toEqual([
      { model: 'judge', usage: expect.objectContaining(usage(50, 5)) },
    ]);
  });

  it('skips a tier whose breaker is open, with the reason, and makes no call to it', async () => {
    const clock = fakeClock();
    const breaker = new CircuitBreaker({ strategy: consecutiveFailures(1), cooldownMs: 30_000, clock });
    const failing = scriptedModel([{ throws: Object.assign(new Error('503 overloaded'), { status: 503 }) }], {
      name: 'cheap',
    });
    const strong = scriptedModel([{ text: 'first' }, { text: 'second' }], { name: 'strong' });
    const model = cascadeModel({
      tiers: [{ model: failing, breaker }, strong],
      escalate: structuralTrigger(),
      clock,
    });
    const first = (await model.generate(request)) as CascadeResponse;
    expect(first.routing.attempts[0]).toMatchObject({
      kind: 'failed',
      name: 'cheap',
      error: '503 overloaded',
    });
    expect(breaker.status).toBe('open');
    clock.advance(1000);
    const second = (await model.generate(request)) as CascadeResponse;
    expect(failing.calls).toHaveLength(1);
    expect(second.routing.attempts[0]).toEqual({
      kind: 'skipped',
      tier: 0,
      name: 'cheap',
      reason: 'breaker_open',
      retryInMs: 29_000,
    });
    expect(second.routing.answeredBy).toEqual({ tier: 1, name: 'strong' });
  });

  it('a 400 from a tier with a breaker is rethrown and leaves the breaker closed', async () => {
    const breaker = new CircuitBreaker({ strategy: consecutiveFailures(1) });
    const badRequest = Object.assign(new Error('400 invalid request'), { status: 400 });
    const strong = scriptedModel([], { name: 'strong' });
    const model = cascadeModel({
      tiers: [{ model: scriptedModel([{ throws: badRequest }], { name: 'cheap' }), breaker }, strong],
      escalate: structuralTrigger(),
    });
    await expect(model.generate(request)).rejects.toThrow('400 invalid request');
    expect(breaker.status).toBe('closed');
    expect(strong.calls).toHaveLength(0);
  });

  it('returns the doubted answer, labeled degraded, when the strong tier is down', async () => {
    const breaker = new CircuitBreaker({ strategy: consecutiveFailures(1) });
    breaker.record(breaker.acquire(), false);
    const cheap = scriptedModel([{ text: '', usage: usage(100, 1) }], { name: 'cheap' });
    const strong = scriptedModel([], { name: 'strong' });
    const model = cascadeModel({
      tiers: [cheap, { model: strong, breaker }],
      escalate: structuralTrigger({ minChars: 1 }),
    });
    const response = (await model.generate(request)) as CascadeResponse;
    expect(response.routing).toMatchObject({ answeredBy: { tier: 0 }, degraded: true });
    expect(response.routing.attempts.map((a) => a.kind)).toEqual(['escalated', 'skipped']);
    // Billed once, as the main usage, not again beside it.
    expect(response.additionalUsage).toBeUndefined();
    expect(response.usage).toMatchObject(usage(100, 1));
  });

  it('throws a labeled error when every tier is down, and rethrows from a tier without a breaker', async () => {
    const open = new CircuitBreaker({ strategy: consecutiveFailures(1) });
    open.record(open.acquire(), false);
    const model = cascadeModel({
      tiers: [{ model: scriptedModel([]), breaker: open }],
      escalate: structuralTrigger(),
    });
    const error = await model.generate(request).catch((e: unknown) => e);
    expect(isReinsError(error) && error.reason).toBe('circuit_open');
    const bare = cascadeModel({
      tiers: [scriptedModel([{ throws: new Error('boom') }]), scriptedModel([])],
      escalate: structuralTrigger(),
    });
    await expect(bare.generate(request)).rejects.toThrow('boom');
  });
});

describe('structuralTrigger', () => {
  const check = (
    options: Parameters<typeof structuralTrigger>[0],
    turn: Parameters<typeof scriptedModel>[0][0],
    req = request,
  ) =>
    scriptedModel([turn])
      .generate(req)
      .then((response) => structuralTrigger(options).check({ request: req, response, tier: 0 }));

  it.each([
    ['cut off at max_tokens', {}, { stopReason: 'max_tokens' as const, text: 'cut' }],
    ['the model refused', {}, { stopReason: 'refusal' as const }],
    ['the text reads as a refusal', { refusalPatterns: [/can't help/] }, { text: "Sorry, I can't help" }],
    ['tool "delete" is not offered', {}, { toolCalls: [{ name: 'delete', input: {} }] }],
    ['tool "search" input lacks required "query"', {}, { toolCalls: [{ name: 'search', input: {} }] }],
    ['tool "search" input is not a JSON object', {}, { toolCalls: [{ name: 'search', inputText: '{bad' }] }],
    ['4 characters, more than 3', { maxChars: 3 }, { text: 'four' }],
    ['the text is not JSON', { textSchema: z.object({ answer: z.number() }) }, { text: 'four' }],
  ])('escalates: %s', async (reason, options, turn) => {
    expect(await check(options, turn)).toEqual({ kind: 'escalate', trigger: 'structural', reason });
  });

  it('keeps a well-formed answer, and checks a text schema and tool input schemas', async () => {
    const schema = z.object({ answer: z.number() });
    expect(await check({ textSchema: schema }, { text: '{"answer": 4}' })).toEqual({ kind: 'keep' });
    expect((await check({ textSchema: schema }, { text: '{"answer": "4"}' })).kind).toBe('escalate');
    const toolInputSchemas = { search: z.object({ query: z.string().min(3) }) };
    expect(
      await check({ toolInputSchemas }, { toolCalls: [{ name: 'search', input: { query: 'reins' } }] }),
    ).toEqual({ kind: 'keep' });
    expect(
      (await check({ toolInputSchemas }, { toolCalls: [{ name: 'search', input: { query: 'r' } }] })).kind,
    ).toBe('escalate');
  });

  it('escalates a missing call that toolChoice demanded', async () => {
    const verdict = await check({}, { text: 'no' }, { ...request, toolChoice: 'required' });
    expect(verdict).toMatchObject({ reason: 'no tool call where one was required' });
  });
});
