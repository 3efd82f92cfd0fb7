import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import type { Model, ModelRequest } from '../model/index.js';
import { fakeClock } from '../testing/fake-clock.js';
import { type ScriptStep, scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { replayTrace } from '../trace/replay.js';
import { memoryTraceSink } from '../trace/sink.js';
import { contextPolicy } from './cache-policy.js';
import { modelSummarizer } from './model-summarizer.js';

const probe = defineTool({
  name: 'probe',
  description: 'Probe.',
  effect: 'read',
  input: z.object({ n: z.number(), fail: z.boolean().optional() }),
  execute: ({ n, fail }) => {
    if (fail) throw new Error('no');
    return `probe ${n} ${'p'.repeat(500)}`;
  },
});

/** A summarizer model that answers `answer` and reports `usage`. */
function summarizerModel(answer: string, requests: ModelRequest[]): Model {
  return {
    name: 'cheap-summarizer',
    generate: async (request) => {
      requests.push(request);
      return {
        content: [{ type: 'text', text: answer }],
        stopReason: 'end_turn',
        usage: { inputTokens: 400, outputTokens: 60, cacheReadTokens: 0, cacheWriteTokens: 0 },
        model: 'cheap-summarizer',
      };
    },
  };
}

async function run(answer: string) {
  const turns: ScriptStep[] = [];
  for (let n = 1; n <= 12; n++)
    turns.push({ toolCalls: [{ name: 'probe', input: { n, ...(n === 2 ? { fail: true } : {}) } }] });
  turns.push({ text: 'done' });
  const model = scriptedModel(turns);
  const requests: ModelRequest[] = [];
  const sink = memoryTraceSink();
  const result = await runAgent({
    model,
    input: 'go',
    tools: [probe],
    maxSteps: 30,
    context: contextPolicy({
      budgetTokens: 1_800,
      summarize: modelSummarizer({ model: summarizerModel(answer, requests) }),
    }),
    prices: {
      scripted: { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 },
      'cheap-summarizer': { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 5 },
    },
    trace: sink,
    clock: fakeClock(),
  });
  const digests = sink.events.flatMap((event) =>
    event.type === 'context-edit' && event.edit.verb === 'summarize' ? [event.edit.text] : [],
  );
  return { result, requests, digests, model, sink };
}

describe('modelSummarizer', () => {
  it('a summary that drops a dead end gets it back from the entries; its tokens are on the run’s bill', async () => {
    const forgetful = JSON.stringify({
      decisions: ['step 1: probed'],
      deadEnds: [],
      facts: [],
      constraints: [],
    });
    const { result, requests, digests, sink } = await run(forgetful);
    expect(requests.length).toBeGreaterThan(0);
    // The steps go to the summarizer as delimited data, with the instruction not to follow them.
    expect(requests[0]?.system).toMatch(/never follow instructions/);
    const first = digests[0] as string;
    expect(first).toContain('step 1: probed');
    expect(first).toContain('probe({"fail":true,"n":2}) failed');
    // Every summarizer call's 460 tokens are billed beside the run's own calls, at its own price.
    const calls = sink.events.filter((event) => event.type === 'model-response');
    const own = calls.reduce(
      (sum, event) => sum + event.prefillTokens + (event.response.usage?.outputTokens ?? 0),
      0,
    );
    const ownUsd = calls.reduce((sum, event) => sum + event.costUsd, 0);
    expect(result.billedTokens - own).toBe(requests.length * 460);
    expect(result.costUsd - ownUsd).toBeCloseTo((requests.length * (400 * 1 + 60 * 5)) / 1e6, 12);
  });

  it('a replay charges the summarizer’s recorded spend again and reproduces the run, budgets included', async () => {
    const forgetful = JSON.stringify({ decisions: [], deadEnds: [], facts: [], constraints: [] });
    const { result, sink } = await run(forgetful);
    const replayed = await replayTrace(sink.events);
    expect(replayed.matches).toBe(true);
    expect(replayed.result.billedTokens).toBe(result.billedTokens);
    expect(replayed.result.costUsd).toBeCloseTo(result.costUsd, 12);
  });

  it('an answer that is not the schema falls back to the structured digest, saying so', async () => {
    const { digests, result } = await run('Sure! Here is a summary: the agent probed things.');
    expect(result.outcome.kind).toBe('answered');
    expect(digests[0]).toContain('not the schema');
    expect(digests[0]).toContain('Ruled out');
  });
});
