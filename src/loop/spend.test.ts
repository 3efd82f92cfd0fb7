import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicModel } from '../anthropic/index.js';
import type { PriceTable } from '../controls/price.js';
import { isConfigurationError } from '../errors/reins-error.js';
import { emptyUsage, type Model, type ModelResponse } from '../model/model.js';
import { openAIModel } from '../openai/index.js';
import { MemorySpendLimiter } from '../resilience/spend-limiter.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { memoryTraceSink } from '../trace/sink.js';
import { createLoopState } from './loop-state.js';
import type { RunOptions } from './options.js';
import { describeOutcome } from './outcome.js';
import { resolveRun } from './resolve-run.js';
import { runAgent } from './run-agent.js';
import { checkBudgets } from './stages/check-budgets.js';

const lookup = defineTool({
  effect: 'read',
  name: 'lookup',
  description: 'Look a key up.',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => ({ key }),
});

const sonnetPrice = {
  inputUsdPerMillionTokens: 3,
  outputUsdPerMillionTokens: 15,
  cacheReadUsdPerMillionTokens: 0.3,
  cacheWriteUsdPerMillionTokens: 3.75,
};
const prices: PriceTable = { 'claude-sonnet-4-5': sonnetPrice };
const dated = 'claude-sonnet-4-5-20250929';
const lookupCall = { name: 'lookup', input: { key: 'a' } };

function options(overrides: Partial<RunOptions> & Pick<RunOptions, 'model'>): RunOptions {
  return {
    input: 'question',
    clock: fakeClock(),
    tools: [lookup],
    maxContextTokens: 1e9,
    prices,
    ...overrides,
  };
}

const usd = (input: number, output: number) => (input * 3 + output * 15) / 1_000_000;

/** A fake Anthropic client that streams one tool-use turn, as the SDK does. */
function anthropicClient(model: string, inputTokens: number) {
  const events = [
    {
      type: 'message_start',
      message: { id: 'msg_1', model, usage: { input_tokens: inputTokens, output_tokens: 1 } },
    },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} },
    },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"key":"a"}' },
    },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 100 } },
    { type: 'message_stop' },
  ];
  const create = async () =>
    (async function* () {
      yield* events;
    })();
  return { messages: { create } } as never;
}

/** A fake Azure OpenAI client: the first chunk (prompt filter results) reports `model: ''`. */
function azureClient(inputTokens: number) {
  const chunks = [
    { id: '', model: '', choices: [] },
    {
      id: 'chatcmpl-1',
      model: 'gpt-4o-2024-08-06',
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: 'call_1',
                type: 'function',
                function: { name: 'lookup', arguments: '{"key":"a"}' },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    },
    {
      id: 'chatcmpl-1',
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
    },
    {
      id: 'chatcmpl-1',
      model: 'gpt-4o-2024-08-06',
      choices: [],
      usage: { prompt_tokens: inputTokens, completion_tokens: 100 },
    },
  ];
  const create = async () =>
    (async function* () {
      yield* chunks;
    })();
  return { chat: { completions: { create } } } as never;
}

describe('spend budgets with the ids providers report', () => {
  it('the audit: a dated response id is priced by the undated key, and maxSpendUsd stops the run', async () => {
    const model = scriptedModel(
      [
        { toolCalls: [lookupCall], model: dated, usage: { inputTokens: 300_000, outputTokens: 1_000 } },
        { text: 'never' },
      ],
      {
        name: 'claude-sonnet-4-5',
      },
    );
    const trace = memoryTraceSink();
    const result = await runAgent(options({ model, maxSpendUsd: 0.5, trace }));
    const cost = usd(300_000, 1_000);
    expect(result.costUsd).toBeCloseTo(cost, 12);
    expect(result.costUsd).toBeGreaterThan(0.5);
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'spend_usd',
      limit: 0.5,
      phase: 'after-results',
    });
    expect((result.outcome as { actual: number }).actual).toBeGreaterThan(cost);
    expect(model.calls).toHaveLength(1);
    const response = trace.events.find((event) => event.type === 'model-response');
    expect(response).toMatchObject({ costUsd: cost, response: { model: dated } });
  });

  it('the same through the Anthropic adapter: name is the requested id, response.model the dated one', async () => {
    const model = anthropicModel(anthropicClient(dated, 300_000), { model: 'claude-sonnet-4-5' });
    const result = await runAgent(options({ model, maxSpendUsd: 0.5 }));
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'spend_usd', limit: 0.5 });
    expect(result.costUsd).toBeCloseTo(usd(300_000, 100), 12);
  });

  it("Azure's model: '' is ignored and the call priced by the requested (deployment) name", async () => {
    const azurePrices: PriceTable = {
      'gpt-4o': { inputUsdPerMillionTokens: 2.5, outputUsdPerMillionTokens: 10 },
    };
    const model = openAIModel(azureClient(300_000), { model: 'gpt-4o' });
    const trace = memoryTraceSink();
    const result = await runAgent(options({ model, prices: azurePrices, maxSpendUsd: 0.5, trace }));
    const cost = (300_000 * 2.5 + 100 * 10) / 1_000_000;
    expect(trace.events.find((event) => event.type === 'model-response')).toMatchObject({
      response: { model: 'gpt-4o-2024-08-06' },
    });
    expect(result.costUsd).toBeCloseTo(cost, 12);
    expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'spend_usd' });

    const scripted = scriptedModel(
      [{ toolCalls: [lookupCall], model: '  ', usage: { inputTokens: 300_000, outputTokens: 0 } }],
      {
        name: 'claude-sonnet-4-5',
      },
    );
    const blank = await runAgent(options({ model: scripted, maxSpendUsd: 0.5 }));
    expect(blank.costUsd).toBeCloseTo(usd(300_000, 0), 12);
    expect(blank.outcome).toMatchObject({ kind: 'over_budget', budget: 'spend_usd' });
  });

  it('the account limiter is charged the real cost of dated ids, cache reads and writes included', async () => {
    const limiter = new MemorySpendLimiter({ clock: fakeClock() });
    const accountSpend = { limiter, accountId: 'acme', limitUsd: 0.1 };
    const usage = {
      inputTokens: 1_000,
      outputTokens: 500,
      cacheReadTokens: 200_000,
      cacheWriteTokens: 10_000,
    };
    const cost = (1_000 * 3 + 500 * 15 + 200_000 * 0.3 + 10_000 * 3.75) / 1_000_000;
    const first = await runAgent(
      options({
        model: scriptedModel([{ text: 'ok', model: dated, usage }], { name: 'claude-sonnet-4-5' }),
        accountSpend,
      }),
    );
    expect(first.outcome).toEqual({ kind: 'answered', text: 'ok' });
    expect(first.costUsd).toBeCloseTo(cost, 12);
    expect(limiter.spent('acme')).toBeCloseTo(cost, 12);
    // The account is over its ceiling now: the next run of the account is stopped before its call.
    const next = scriptedModel([{ text: 'never' }], { name: 'claude-sonnet-4-5' });
    const second = await runAgent(options({ model: next, accountSpend }));
    expect(second.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'account_spend_usd',
      limit: 0.1,
      phase: 'before-call',
    });
    expect(next.calls).toHaveLength(0);
  });
});

describe('a spend budget fails closed on a model no price resolves for', () => {
  const unpriced = (name: string, overrides: Partial<RunOptions>) => {
    try {
      void runAgent(options({ model: scriptedModel([], { name }), ...overrides }));
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('throws a ConfigurationError (prices) at start, for maxSpendUsd and for accountSpend', () => {
    const accountSpend = { limiter: new MemorySpendLimiter(), accountId: 'a', limitUsd: 1 };
    for (const budget of [{ maxSpendUsd: 1 }, { accountSpend }]) {
      const thrown = unpriced('gpt-4o', budget);
      expect(isConfigurationError(thrown)).toBe(true);
      expect((thrown as { option: string }).option).toBe('prices');
      expect((thrown as Error).message).toMatch(/no price for model "gpt-4o".*add it or a "\*" entry/);
    }
    // A key that is not a prefix at a boundary does not price it.
    expect(
      isConfigurationError(unpriced('gpt-4o', { maxSpendUsd: 1, prices: { 'gpt-4': sonnetPrice } })),
    ).toBe(true);
    // Priced by a rule, or by '*', or no spend budget at all: no error.
    expect(unpriced('claude-sonnet-4-5-20250929', { maxSpendUsd: 1 })).toBeUndefined();
    expect(unpriced('gpt-4o', { maxSpendUsd: 1, prices: { ...prices, '*': sonnetPrice } })).toBeUndefined();
    expect(unpriced('gpt-4o', {})).toBeUndefined();
  });

  it('without a spend budget an unpriced call still costs 0 (prices are figures only)', async () => {
    const model = scriptedModel([{ text: 'ok', usage: { inputTokens: 300_000 } }], { name: 'gpt-4o' });
    const result = await runAgent(options({ model }));
    expect(result.outcome).toEqual({ kind: 'answered', text: 'ok' });
    expect(result.costUsd).toBe(0);
  });

  /** A run whose prepareStep switches step 2 to a model the table does not price. */
  async function switchedRun(budget: Partial<RunOptions>) {
    const first = scriptedModel(
      [{ toolCalls: [lookupCall], model: dated, usage: { inputTokens: 10_000, outputTokens: 100 } }],
      {
        name: 'claude-sonnet-4-5',
      },
    );
    const mystery = scriptedModel([{ text: 'free?', usage: { inputTokens: 10_000, outputTokens: 100 } }], {
      name: 'mystery-model',
    });
    const trace = memoryTraceSink();
    const result = await runAgent(
      options({
        model: first,
        trace,
        prepareStep: ({ step }) => (step === 2 ? { model: mystery } : undefined),
        ...budget,
      }),
    );
    return { result, mystery, trace };
  }

  it('ends over_budget with `unpriced` when a prepareStep switches to an unpriced model; never a free call', async () => {
    const { result, mystery } = await switchedRun({ maxSpendUsd: 5 });
    const spent = usd(10_000, 100);
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'spend_usd',
      limit: 5,
      actual: spent,
      unpriced: 'mystery-model',
    });
    expect(result.costUsd).toBeCloseTo(spent, 12);
    // Refused before the call once run-loop passes the prepared model to checkBudgets; stopped
    // right after the answer (nothing it proposed runs, nothing is counted free) until then.
    const outcome = result.outcome as { phase: string };
    expect(outcome.phase).toBe(mystery.calls.length === 0 ? 'before-call' : 'during-call');
    expect(describeOutcome(result.outcome)).toMatch(/no price for model "mystery-model"/);
  });

  it('names the account ceiling and its spend so far when only accountSpend is set', async () => {
    const limiter = new MemorySpendLimiter({ clock: fakeClock() });
    limiter.add('acme', 0.25);
    const { result } = await switchedRun({ accountSpend: { limiter, accountId: 'acme', limitUsd: 1 } });
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'account_spend_usd',
      limit: 1,
      unpriced: 'mystery-model',
    });
    expect((result.outcome as { actual: number }).actual).toBeCloseTo(0.25 + usd(10_000, 100), 12);
    expect(limiter.spent('acme')).toBeCloseTo(0.25 + usd(10_000, 100), 12);
  });
});

describe('checkBudgets projects the next call at the price of the model about to be called', () => {
  const table: PriceTable = {
    cheap: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1 },
    pricey: { inputUsdPerMillionTokens: 100, outputUsdPerMillionTokens: 100 },
  };
  const named = (name: string): Model => ({
    name,
    generate: async (): Promise<ModelResponse> => ({
      content: [],
      stopReason: 'end_turn',
      usage: emptyUsage(),
    }),
  });

  it('uses the next model when given, else the run model; unpriced fails before the call', async () => {
    const setup = resolveRun(options({ model: named('cheap'), prices: table, maxSpendUsd: 0.5 }));
    const state = createLoopState(setup);
    try {
      // 10,000 tokens: $0.01 at the cheap price, $1 at the pricey one.
      expect(await checkBudgets(state, 'before-call', 1, 10_000)).toBeUndefined();
      expect(await checkBudgets(state, 'before-call', 1, 10_000, named('cheap'))).toBeUndefined();
      expect(await checkBudgets(state, 'before-call', 1, 10_000, named('pricey'))).toEqual({
        kind: 'over_budget',
        budget: 'spend_usd',
        limit: 0.5,
        actual: 1,
        phase: 'before-call',
      });
      const outcome = await checkBudgets(state, 'before-call', 1, 10, named('priceyx')); // no boundary: not pricey's price
      expect(outcome).toEqual({
        kind: 'over_budget',
        budget: 'spend_usd',
        limit: 0.5,
        actual: 0,
        phase: 'before-call',
        unpriced: 'priceyx',
      });
      expect(await checkBudgets(state, 'before-call', 1, 10, named('pricey-20250929'))).toBeUndefined();
      expect(describeOutcome(outcome!)).toBe(
        'over_budget: spend_usd cannot be enforced: no price for model "priceyx" (spent 0 of limit 0.500000, before-call)',
      );
    } finally {
      state.unlink();
    }
  });
});
