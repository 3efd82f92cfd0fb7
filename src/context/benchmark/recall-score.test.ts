import { describe, expect, it } from 'vitest';
import { runAgent } from '../../loop/run-agent.js';
import type { Message } from '../../model/content.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { approxTokenEstimator } from '../../tokens/token-estimator.js';
import type { ContextPolicy } from '../context-policy.js';
import { needleParameters, needlePlan, stepCall, stepNarration, stepResult } from './needle-plan.js';
import { needleOpening, needleRun, needleTools } from './needle-run.js';
import { recallScore, windowLines } from './recall-score.js';

const plan = needlePlan(7);

describe('recallScore', () => {
  it('a window that shows nothing scores 0; the whole transcript scores 1', () => {
    expect(recallScore([], plan.facts).recall).toBe(0);
    const everything: Message[] = [
      { role: 'user', content: [{ type: 'text', text: `${plan.task}\n${plan.userConstraint}` }] },
      ...plan.steps.map(
        (step): Message => ({
          role: 'user',
          content: [{ type: 'text', text: stepResult(step).text }],
        }),
      ),
    ];
    expect(recallScore(windowLines(everything), plan.facts).recall).toBe(1);
  });

  it('a call shown without its failure, or an id without whose it is, does not count', () => {
    const deadEnd = plan.facts.find((fact) => fact.kind === 'dead_end');
    const id = plan.facts.find((fact) => fact.kind === 'id');
    const approach = deadEnd?.needles[0] as string;
    const order = id?.needles[0] as string;
    const lines = windowLines([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'try_fix', input: { approach } }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', toolUseId: 'c', content: '[cleared]', isError: true }],
      },
      { role: 'user', content: [{ type: 'text', text: `lookup returned ${order}` }] },
    ]);
    const score = recallScore(lines, plan.facts);
    expect(score.byKind.dead_end).toBe(0);
    expect(score.byKind.id).toBe(0);
  });

  it('through the loop: a policy that evicts every step it can recalls only what the task states', async () => {
    const dropEverything: ContextPolicy = {
      name: 'drop-everything',
      prepare: ({ transcript, window }) => {
        // Every complete step but the newest, in one range with no text: nothing of them is shown.
        let last = transcript.length - 1;
        while (last > 0 && transcript[last]?.role !== 'assistant') last--;
        let first = 1;
        while (first < last && transcript[first]?.role !== 'assistant') first++;
        if (first >= last || window.rangeCovering(first)?.to === last) return undefined;
        return { edits: [{ verb: 'evict', from: first, to: last, steps: [1, 1], text: '' }] };
      },
    };
    const result = await needleRun(plan, 'fifo', undefined, dropEverything);
    // The task (never in a range) holds one constraint of the fourteen facts; the rest are gone.
    expect(result.score.recall).toBeCloseTo(1 / plan.facts.length);
    expect(result.score.byKind.dead_end).toBe(0);
    expect(result.score.byKind.id).toBe(0);
    expect(result.deadEndRetries).toBe(plan.decisions.length);
  });
});

describe('needleOpening', () => {
  it('has the shapes the loop writes for the same calls', async () => {
    const turns = [];
    for (let k = 1; k <= needleParameters.keyTurn; k++) {
      const call = stepCall(plan.steps[k - 1] as (typeof plan.steps)[number]);
      const callTokens = approxTokenEstimator.countText(call.name + JSON.stringify(call.input));
      turns.push({ text: stepNarration(k, callTokens), toolCalls: [{ ...call, id: `opening_${k}` }] });
    }
    const run = await runAgent({
      model: scriptedModel([...turns, { text: 'done' }]),
      input: plan.task,
      tools: needleTools(plan),
      giveUpTool: false,
      maxSteps: 10,
    });
    const opening = needleOpening(plan);
    // The loop's transcript, with the user's constraint added after the key turn's result.
    const written = run.messages
      .slice(0, opening.length)
      .map((message, i) =>
        i === opening.length - 1 && message.role === 'user'
          ? { ...message, content: [...message.content, { type: 'text', text: plan.userConstraint }] }
          : message,
      );
    expect(written).toEqual(opening);
  });
});
