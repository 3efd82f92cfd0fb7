import { describe, expect, it } from 'vitest';
import { runAgent } from '../src/index.js';
import type { Model, ModelResponse } from '../src/model/model.js';
import { type AnthropicStreamEvent, assembleAnthropicStream } from '../src/stream/index.js';
import { memoryTraceSink } from '../src/trace/index.js';
import { anthropicStreams, eventsOf } from './support/recorded-streams.js';

/**
 * Usage the budgets can trust, on recorded server-tool turns: the context budget reads the prefill
 * the next call will send, billed tokens and spend count every iteration at its own model's price.
 */
const assembled = (name: string): Promise<ModelResponse> => {
  const stream = anthropicStreams().find((candidate) => candidate.name === name);
  if (!stream) throw new Error(`no recording ${name}`);
  return assembleAnthropicStream(eventsOf(stream.events) as AsyncIterable<AnthropicStreamEvent>);
};

/** The recorded turn first (as a pause_turn, so the loop calls again), then a short answer. */
function replaying(first: ModelResponse): Model {
  let calls = 0;
  return {
    name: first.model ?? 'claude-test',
    async generate() {
      calls++;
      if (calls === 1) return { ...first, stopReason: 'pause_turn' };
      return {
        content: [{ type: 'text', text: 'Done.' }],
        stopReason: 'end_turn',
        usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
        model: first.model ?? 'claude-test',
      };
    },
  };
}

describe('server-tool usage and the budgets', () => {
  it('a web-search turn sizes the next prefill by its last iteration, not the summed input', async () => {
    const turn = await assembled('vercel/anthropic/anthropic-web-search-tool.1.chunks.txt');
    // message_start 2,037 (first prefill); top-level input 15,665 = 2,037 + 13,628 over two
    // iterations (one search request); output 795. The next call sends 13,628 + 795.
    expect(turn.usage).toMatchObject({ inputTokens: 15_665, outputTokens: 795 });
    expect(turn.contextTokens).toBe(15_665 - 2_037 + 795);
    const sink = memoryTraceSink();
    const result = await runAgent({
      model: replaying(turn),
      input: 'News?',
      maxContextTokens: 15_000,
      trace: sink,
    });
    // Read as the sum (16,460) this run would stop over budget before its second call.
    expect(result.outcome).toEqual({ kind: 'answered', text: 'Done.' });
    const response = sink.events.find((event) => event.type === 'model-response');
    expect(response).toMatchObject({ contextTokens: 14_423, billedTokens: 15_665 + 795 });
  });

  it('compaction: billed over every iteration, context from the compacted one', async () => {
    const turn = await assembled('vercel/anthropic/anthropic-compaction.1.chunks.txt');
    // iterations: compaction 60,385 in / 522 out, then the message 612 in / 2,819 out.
    expect(turn.usage).toMatchObject({ inputTokens: 60_385 + 612, outputTokens: 522 + 2_819 });
    expect(turn.contextTokens).toBe(612 + 2_819);
    const result = await runAgent({ model: replaying(turn), input: 'Summarize.', maxContextTokens: 10_000 });
    expect(result.outcome.kind).toBe('answered');
    expect(result.usage.inputTokens).toBe(60_385 + 612 + 10);
  });

  it('an advisor turn prices the advisor model’s tokens at its own price; unpriced, the spend limit fails closed', async () => {
    const turn = await assembled('vercel/anthropic/anthropic-advisor-20250301.1.chunks.txt');
    expect(turn.model).toBe('claude-sonnet-4-6');
    expect(turn.usage).toMatchObject({ inputTokens: 1_051 + 3_676, outputTokens: 35 + 3_356 });
    expect(turn.additionalUsage).toEqual([
      {
        model: 'claude-opus-4-7',
        usage: { inputTokens: 2_728, outputTokens: 3_880, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    ]);
    expect(turn.contextTokens).toBe(3_676 + 3_356);
    const prices = {
      'claude-sonnet-4-6': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 },
      'claude-opus-4-7': { inputUsdPerMillionTokens: 15, outputUsdPerMillionTokens: 75 },
    };
    const result = await runAgent({ model: replaying(turn), input: 'Plan.', prices, maxSpendUsd: 10 });
    const executor = ((1_051 + 3_676 + 10) * 3 + (35 + 3_356 + 2) * 15) / 1e6;
    const advisor = (2_728 * 15 + 3_880 * 75) / 1e6;
    expect(result.costUsd).toBeCloseTo(executor + advisor, 10);
    expect(result.usage.inputTokens).toBe(1_051 + 3_676 + 2_728 + 10);
    const unpriced = await runAgent({
      model: replaying(turn),
      input: 'Plan.',
      prices: { 'claude-sonnet-4-6': prices['claude-sonnet-4-6'] },
      maxSpendUsd: 10,
    });
    expect(unpriced.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'spend_usd',
      unpriced: 'claude-opus-4-7',
    });
  });
});
