import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError } from '../errors/reins-error.js';
import { runAgent } from '../loop/run-agent.js';
import type { Model, ModelRequest, ModelResponse } from '../model/model.js';
import { exponentialBackoff } from '../resilience/backoff.js';
import { retryingModel } from '../resilience/retrying-model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { seededRandom } from '../testing/seeded-random.js';
import { approxTokenEstimator, PrefillCounter } from '../tokens/token-estimator.js';
import { defineTool } from '../tools/define-tool.js';
import { replayTrace } from '../trace/replay.js';
import { memoryTraceSink } from '../trace/sink.js';
import { budgetedModel } from './budgeted-model.js';
import { failedCallCharge } from './failed-call-charge.js';
import { isJobBudgetExceeded, JobBudget } from './job-budget.js';

const prices = { cheap: { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 4 } };
const usage = (inputTokens: number, outputTokens: number) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});
const request: ModelRequest = {
  system: '',
  messages: [],
  tools: [],
  toolChoice: 'none',
  maxOutputTokens: 100,
};

describe('JobBudget', () => {
  it('reserves the maximum, settles to actual, refunds the difference', () => {
    const budget = new JobBudget({ maxTokens: 1_000, maxSpendUsd: 1, prices });
    const held = budget.reserve({ spender: 'a', model: 'cheap', inputTokens: 200, maxOutputTokens: 300 });
    if (!held.ok) throw new Error('refused');
    expect(held.reservation.tokens).toBe(500);
    expect(held.reservation.usd).toBeCloseTo((200 * 1 + 300 * 4) / 1e6, 12);
    expect(budget.spent()).toMatchObject({ tokens: 0, reservedTokens: 500 });
    const settled = budget.settle(held.reservation, usage(200, 50), 'cheap');
    expect(settled).toEqual({ tokens: 250, usd: (200 + 200) / 1e6, basis: 'actual', overTokens: 0 });
    expect(budget.spent()).toMatchObject({ tokens: 250, reservedTokens: 0, calls: 1 });
    // Settling twice changes nothing.
    budget.settle(held.reservation, usage(9_000, 9_000));
    expect(budget.spent().tokens).toBe(250);
  });

  it('refuses a call whose maximum does not fit beside what calls in flight hold, and stays refused', () => {
    const budget = new JobBudget({ maxTokens: 1_000 });
    const first = budget.reserve({ spender: 'agent:a', model: 'm', inputTokens: 300, maxOutputTokens: 300 });
    expect(first.ok).toBe(true);
    const second = budget.reserve({ spender: 'agent:b', model: 'm', inputTokens: 300, maxOutputTokens: 300 });
    expect(second).toEqual({
      ok: false,
      exceeded: { budget: 'job_tokens', limit: 1_000, actual: 1_200, spender: 'agent:b' },
    });
    // Exhaustion is sticky and names the first spender, even for a call that would fit.
    const third = budget.reserve({ spender: 'agent:c', model: 'm', inputTokens: 1, maxOutputTokens: 1 });
    expect(third.ok ? undefined : third.exceeded.spender).toBe('agent:b');
    expect(budget.retry('retry:m')).toMatchObject({ ok: false, exceeded: { spender: 'agent:b' } });
  });

  it('fails closed on an unpriced model under a USD limit', () => {
    const budget = new JobBudget({ maxSpendUsd: 1, prices });
    expect(budget.reserve({ spender: 's', model: 'dear', inputTokens: 1, maxOutputTokens: 1 })).toMatchObject(
      {
        ok: false,
        exceeded: { budget: 'job_spend_usd', unpriced: 'dear', spender: 's' },
      },
    );
  });

  it('keeps the whole reservation for usage that is not counts (NaN, negative, missing)', () => {
    const budget = new JobBudget({ maxTokens: 10_000 });
    for (const bad of [usage(Number.NaN, 1), usage(-5, 1), usage(1, Number.POSITIVE_INFINITY), undefined]) {
      const held = budget.reserve({ spender: 's', model: 'm', inputTokens: 10, maxOutputTokens: 90 });
      if (!held.ok) throw new Error('refused');
      expect(budget.settle(held.reservation, bad).basis).toBe('kept');
    }
    expect(budget.spent().tokens).toBe(400);
  });

  it('charges a model that reports more than it reserved, and ends the job naming it', () => {
    const budget = new JobBudget({ maxTokens: 1_000 });
    const held = budget.reserve({
      spender: 'stage:greedy',
      model: 'm',
      inputTokens: 100,
      maxOutputTokens: 100,
    });
    if (!held.ok) throw new Error('refused');
    expect(budget.settle(held.reservation, usage(100, 5_000)).overTokens).toBe(4_900);
    expect(budget.spent().tokens).toBe(5_100);
    expect(budget.exceeded).toEqual({
      budget: 'job_tokens',
      limit: 1_000,
      actual: 5_100,
      spender: 'stage:greedy',
    });
  });

  it('ends at the wall clock, on the injected clock', () => {
    const clock = fakeClock();
    const budget = new JobBudget({ maxWallMs: 1_000, clock });
    expect(budget.reserve({ spender: 'a', model: 'm', inputTokens: 1, maxOutputTokens: 1 }).ok).toBe(true);
    clock.advance(1_000);
    expect(budget.reserve({ spender: 'b', model: 'm', inputTokens: 1, maxOutputTokens: 1 })).toEqual({
      ok: false,
      exceeded: { budget: 'job_wall_ms', limit: 1_000, actual: 1_000, spender: 'b' },
    });
  });

  it('rejects invalid options with labeled errors', () => {
    for (const bad of [
      { maxTokens: 0 },
      { maxSpendUsd: 1 },
      { maxRetries: -1 },
      { assumedMaxOutputTokens: 0.5 },
    ]) {
      expect(() => new JobBudget(bad)).toThrow();
      try {
        new JobBudget(bad);
      } catch (thrown) {
        expect(isConfigurationError(thrown)).toBe(true);
      }
    }
  });
});

describe('failedCallCharge', () => {
  it('refunds an HTTP error or a connection never made; keeps an abort or an unreadable error', () => {
    expect(failedCallCharge(Object.assign(new Error('rate limited'), { status: 429 }))).toBe('release');
    expect(failedCallCharge(Object.assign(new Error('bad request'), { status: 400 }))).toBe('release');
    expect(failedCallCharge(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe('release');
    expect(failedCallCharge(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toBe('keep');
    expect(failedCallCharge(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe('keep');
    expect(failedCallCharge('???')).toBe('keep');
  });
});

describe('budgetedModel', () => {
  it('reserves before the call, refuses without sending, refunds a 429', async () => {
    const budget = new JobBudget({ maxTokens: 500 });
    const inner = scriptedModel([
      { throws: Object.assign(new Error('slow down'), { status: 429 }) },
      { text: 'ok', usage: { inputTokens: 10, outputTokens: 20 } },
    ]);
    const model = budgetedModel(inner, budget, 'tool:t');
    await expect(model.generate(request)).rejects.toThrow('slow down');
    expect(budget.spent()).toMatchObject({ tokens: 0, reservedTokens: 0 });
    await model.generate(request);
    expect(budget.spent().tokens).toBe(30);
    const big = await model
      .generate({ ...request, maxOutputTokens: 10_000 })
      .catch((thrown: unknown) => thrown);
    expect(isJobBudgetExceeded(big)).toBe(true);
    expect(inner.calls).toHaveLength(2);
  });
});

/** A model answering after the scheduler lets it, with usage up to its cap (honest) or past it. */
function scheduledModel(
  name: string,
  schedule: <T>(value: Promise<T>) => Promise<T>,
  outputTokens: (request: ModelRequest, turn: number) => number,
): Model {
  let turn = 0;
  // Input as the loop estimates it: the reservation's input side is that estimate.
  const counter = new PrefillCounter(approxTokenEstimator);
  return {
    name,
    async generate(request) {
      const at = turn++;
      await schedule(Promise.resolve());
      const response: ModelResponse = {
        content: [{ type: 'text', text: `answer ${at}` }],
        stopReason: 'end_turn',
        usage: usage(counter.request(request), outputTokens(request, at)),
      };
      return response;
    },
  };
}

describe('one budget across 8 concurrent sub-agents', () => {
  it('never overspends by more than one call’s reserved maximum (property, fake clock)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 200, max: 20_000 }),
        fc.integer({ min: 10, max: 500 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.boolean(),
        async (scheduler, maxTokens, maxOutputTokens, seed, overReport) => {
          const clock = fakeClock();
          const budget = new JobBudget({ maxTokens, clock });
          const random = seededRandom(seed);
          // Each answer uses up to its cap; with `overReport`, one in five reports twice its cap.
          const output = () => {
            const r = random();
            return overReport && r < 0.2 ? maxOutputTokens * 2 : Math.floor(r * (maxOutputTokens + 1));
          };
          const runs = Array.from({ length: 8 }, (_, index) =>
            runAgent({
              model: scheduledModel(`m${index}`, (p) => scheduler.schedule(p), output),
              input: 'go',
              maxOutputTokens,
              giveUpTool: false,
              jobBudget: budget,
              spender: `agent:${index}`,
              clock,
              maxContextTokens: 1_000_000,
            }),
          );
          // A sub-agent that answers at once ends; keep the job busy with second waves.
          const waves = runs.map((run, index) =>
            run.then(() =>
              runAgent({
                model: scheduledModel(`w${index}`, (p) => scheduler.schedule(p), output),
                input: 'again',
                maxOutputTokens,
                giveUpTool: false,
                jobBudget: budget,
                spender: `agent:${index}:2`,
                clock,
              }),
            ),
          );
          await scheduler.waitFor(Promise.all(waves));
          const results = [...(await Promise.all(runs)), ...(await Promise.all(waves))];
          const spent = budget.spent();
          // What one over-reporting call can cost past its reservation: its output cap again.
          const oneCall = maxOutputTokens;
          expect(spent.reservedTokens).toBe(0);
          if (!overReport) expect(spent.tokens).toBeLessThanOrEqual(maxTokens);
          else expect(spent.tokens).toBeLessThanOrEqual(maxTokens + 8 * oneCall);
          for (const result of results)
            if (result.outcome.kind === 'over_budget') {
              expect(result.outcome.budget).toBe('job_tokens');
              expect(result.outcome.spender).toBe(budget.exceeded?.spender);
            } else expect(result.outcome.kind).toBe('answered');
        },
      ),
      { numRuns: 60, seed: 21 },
    );
  });

  it('an honest job never goes past its limit, however the answers interleave', async () => {
    // The bound made exact: 8 agents, usage at the cap, a limit that fits 5 calls and a bit.
    const budget = new JobBudget({ maxTokens: 5 * 150 + 40 });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        runAgent({
          model: scriptedModel([{ text: 'ok', usage: { inputTokens: 50, outputTokens: 100 } }], {
            name: `m${index}`,
          }),
          input: 'x'.repeat(190),
          maxOutputTokens: 100,
          giveUpTool: false,
          jobBudget: budget,
          spender: `agent:${index}`,
        }),
      ),
    );
    expect(answers.filter((run) => run.outcome.kind === 'answered')).toHaveLength(5);
    expect(budget.spent().tokens).toBe(750);
    expect(answers[5]?.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'job_tokens',
      spender: 'agent:5',
    });
    expect(answers[7]?.outcome).toMatchObject({ kind: 'over_budget', spender: 'agent:5' });
  });
});

describe('the job budget through the loop', () => {
  it('a tool that calls a model in a loop ends the job, named', async () => {
    const budget = new JobBudget({ maxTokens: 2_000 });
    let inner = 0;
    const summarize = defineTool({
      name: 'summarize',
      description: 'Summarize, again and again.',
      effect: 'read',
      trustedOutput: true,
      input: z.object({}),
      async execute(_input, context) {
        const model = budgetedModel(
          scriptedModel(
            Array.from({ length: 100 }, () => ({
              text: 'summary',
              usage: { inputTokens: 100, outputTokens: 100 },
            })),
          ),
          context.jobBudget as JobBudget,
          context.spender ?? 'tool',
        );
        for (;;) {
          inner++;
          await model.generate(request);
        }
      },
    });
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'summarize', input: {} }] }, { text: 'never' }]),
      input: 'go',
      tools: [summarize],
      maxOutputTokens: 100,
      jobBudget: budget,
      spender: 'agent:parent',
    });
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'job_tokens',
      spender: 'agent:parent/tool:summarize',
      phase: 'before-call',
    });
    expect(budget.spent().tokens).toBeLessThanOrEqual(2_000);
    expect(inner).toBeGreaterThan(5);
  });

  it('retries across the job are counted, and the one too many ends the run naming the retrier', async () => {
    const budget = new JobBudget({ maxRetries: 1 });
    const overloaded = () => Object.assign(new Error('overloaded'), { status: 529 });
    const model = retryingModel(
      scriptedModel([{ throws: overloaded() }, { throws: overloaded() }, { text: 'late' }]),
      {
        maxAttempts: 5,
        backoff: exponentialBackoff({ baseMs: 0, capMs: 0 }),
        jobBudget: budget,
        spender: 'retry:classifier',
      },
    );
    const result = await runAgent({ model, input: 'go', jobBudget: budget, maxOutputTokens: 50 });
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'job_retries',
      limit: 1,
      actual: 2,
      spender: 'retry:classifier',
    });
    // The attempts failed with HTTP errors: nothing billed, the reservation released.
    expect(budget.spent()).toMatchObject({ tokens: 0, reservedTokens: 0, retries: 1 });
  });

  it('a run the job stopped replays from its trace to the same outcome', async () => {
    const budget = new JobBudget({ maxTokens: 1_000 });
    budget.reserve({ spender: 'agent:other', model: 'm', inputTokens: 600, maxOutputTokens: 0 });
    const sink = memoryTraceSink();
    const result = await runAgent({
      model: scriptedModel([
        { toolCalls: [{ name: 'lookup', input: {} }], usage: { inputTokens: 50, outputTokens: 50 } },
        { text: 'never' },
      ]),
      input: 'go',
      tools: [
        defineTool({
          name: 'lookup',
          description: 'Look up.',
          effect: 'read',
          trustedOutput: true,
          input: z.object({}),
          execute: () => ({ rows: 3 }),
        }),
      ],
      maxOutputTokens: 200,
      jobBudget: budget,
      spender: 'agent:mine',
      trace: sink,
    });
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'job_tokens',
      spender: 'agent:mine',
      phase: 'before-call',
    });
    const replay = await replayTrace(sink.events);
    expect(replay.outcome).toEqual(result.outcome);
    expect(replay.matches).toBe(true);
  });

  it('a run without a job budget is unchanged; one with it settles each call to its usage', async () => {
    const budget = new JobBudget();
    const result = await runAgent({
      model: scriptedModel([{ text: 'ok', usage: { inputTokens: 7, outputTokens: 3 } }]),
      input: 'go',
      jobBudget: budget,
    });
    expect(result.outcome.kind).toBe('answered');
    expect(budget.spent()).toMatchObject({ tokens: 10, calls: 1, reservedTokens: 0 });
  });
});
