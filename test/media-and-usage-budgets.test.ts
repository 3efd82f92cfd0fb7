import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, runAgent } from '../src/index.js';
import type { Message } from '../src/model/content.js';
import type { ModelResponse, Usage } from '../src/model/model.js';
import { scriptedModel } from '../src/testing/index.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'l',
  effect: 'read',
  trustedOutput: true,
  input: z.object({ q: z.string() }),
  execute: () => 'x',
});
const u = (over: Partial<Usage> = {}): Usage => ({
  inputTokens: 100,
  outputTokens: 10,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...over,
});
const call = (extra: Partial<ModelResponse>): ModelResponse => ({
  content: [
    { type: 'tool_use', id: `c${Math.random()}`, name: 'lookup', input: { q: String(Math.random()) } },
  ],
  stopReason: 'tool_use',
  usage: u(),
  model: 'm',
  ...extra,
});
const prices = {
  m: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1 },
  adv: { inputUsdPerMillionTokens: 100, outputUsdPerMillionTokens: 100 },
};

describe('contextTokens absurd', () => {
  it.each([[1e15], [-5], [Number.NaN], [Number.POSITIVE_INFINITY], [1.5]])('%s', async (ctx) => {
    const r = await runAgent({
      model: scriptedModel([() => call({ contextTokens: ctx }), { text: 'done' }]),
      input: 'go',
      tools: [lookup],
      maxContextTokens: 50_000,
    });
    if (ctx === 1e15) expect(r.outcome).toMatchObject({ kind: 'over_budget', budget: 'context_tokens' });
    else expect(r.outcome.kind).toBe('answered');
    expect(Number.isFinite(r.state.contextTokens)).toBe(true);
  });
});

describe('reasoning > output, cache-only usage', () => {
  it('reasoningTokens clamped to outputTokens; billed = output', async () => {
    const r = await runAgent({
      model: scriptedModel([
        () => ({
          content: [{ type: 'text', text: 'a' }],
          stopReason: 'end_turn',
          usage: u({ outputTokens: 10, reasoningTokens: 5000 }),
          model: 'm',
        }),
      ]),
      input: 'go',
    });
    expect(r.usage.reasoningTokens ?? 0).toBeLessThanOrEqual(r.usage.outputTokens);
    expect(r.billedTokens).toBe(110);
  });
  it('cache-only usage is billed at the cache price and counted as prefill', async () => {
    const r = await runAgent({
      model: scriptedModel(
        [
          () => ({
            content: [{ type: 'text', text: 'a' }],
            stopReason: 'end_turn',
            usage: u({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 1_000_000 }),
            model: 'm',
          }),
        ],
        { name: 'm' },
      ),
      input: 'go',
      prices: {
        m: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1, cacheReadUsdPerMillionTokens: 0.1 },
      },
      maxSpendUsd: 10,
    });
    expect(r.costUsd).toBeCloseTo(0.1);
    expect(r.billedTokens).toBe(1_000_000);
  });
});

describe('usage absent', () => {
  it('with maxSpendUsd: bills an estimate, never zero', async () => {
    const r = await runAgent({
      model: scriptedModel(
        [
          () => {
            const x = call({});
            delete (x as Partial<ModelResponse>).usage;
            return x;
          },
          () => ({ content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn', model: 'm' }),
        ],
        { name: 'm' },
      ),
      input: 'go'.repeat(1000),
      tools: [lookup],
      prices,
      maxSpendUsd: 1,
    });
    expect(r.outcome.kind).toBe('answered');
    expect(r.costUsd).toBeGreaterThan(0);
    expect(r.billedTokens).toBeGreaterThan(1000);
  });
  it('usage absent but additionalUsage reported: the other model is still billed', async () => {
    // The provider told us an advisor model ran 1M tokens at $100/M; the run's spend must see it.
    const r = await runAgent({
      model: scriptedModel(
        [
          () => ({
            content: [{ type: 'text', text: 'ok' }],
            stopReason: 'end_turn',
            model: 'm',
            additionalUsage: [{ model: 'adv', usage: u({ inputTokens: 1_000_000 }) }],
          }),
        ],
        { name: 'm' },
      ),
      input: 'go',
      prices,
      maxSpendUsd: 1,
    });
    expect(r.costUsd).toBeGreaterThan(50);
  });
  it('usage malformed (NaN input) but additionalUsage reported: still billed', async () => {
    const r = await runAgent({
      model: scriptedModel(
        [
          () => ({
            content: [{ type: 'text', text: 'ok' }],
            stopReason: 'end_turn',
            model: 'm',
            usage: u({ inputTokens: Number.NaN }),
            additionalUsage: [{ model: 'adv', usage: u({ inputTokens: 1_000_000 }) }],
          }),
        ],
        { name: 'm' },
      ),
      input: 'go',
      prices,
      maxSpendUsd: 1,
    });
    expect(r.costUsd).toBeGreaterThan(50);
  });
});

describe('additionalUsage huge list', () => {
  it('100k entries: finishes, sums, and an unpriced one fails closed', async () => {
    const list = Array.from({ length: 100_000 }, () => ({
      model: 'adv',
      usage: u({ inputTokens: 10, outputTokens: 0 }),
    }));
    list.push({ model: 'nope', usage: u() });
    const r = await runAgent({
      model: scriptedModel(
        [
          () => ({
            content: [{ type: 'text', text: 'ok' }],
            stopReason: 'end_turn',
            model: 'm',
            usage: u(),
            additionalUsage: list,
          }),
        ],
        { name: 'm' },
      ),
      input: 'go',
      prices,
      maxSpendUsd: 1000,
    });
    expect(r.outcome).toMatchObject({ kind: 'over_budget', budget: 'spend_usd', unpriced: 'nope' });
  });
});

describe('maxContextTokens with media', () => {
  const text = 'lorem ipsum dolor sit amet '.repeat(40_000); // ~1.08M chars ≈ 270k tokens of plain text
  const doc: Message[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Summarize the attached document.' },
        {
          type: 'document',
          source: { type: 'base64', mediaType: 'text/plain', data: Buffer.from(text).toString('base64') },
          title: 'big.txt',
        },
      ],
    },
  ];
  it('a 1 MB plain-text document is not sent under maxContextTokens 8000', async () => {
    const model = scriptedModel([{ text: 'summary' }]);
    const r = await runAgent({ model, input: doc, maxContextTokens: 8_000 });
    // Expected: refused before the call (the prefill is ~270k tokens). Actual: estimated at 3,000.
    expect(model.calls).toHaveLength(0);
    expect(r.outcome).toMatchObject({ kind: 'over_budget', budget: 'context_tokens', phase: 'before-call' });
  });
  it('40 images (~64k tokens real on Anthropic) under maxContextTokens 50k', async () => {
    const png = Buffer.alloc(3_000_000, 1).toString('base64');
    const input: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'compare' },
          ...Array.from({ length: 40 }, () => ({
            type: 'image' as const,
            source: { type: 'base64' as const, mediaType: 'image/png', data: png },
          })),
        ],
      },
    ];
    const model = scriptedModel([{ text: 'ok' }]);
    const r = await runAgent({ model, input, maxContextTokens: 50_000 });
    expect(r.outcome.kind).toBe('over_budget');
  });
});
