import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isReinsError } from '../errors/reins-error.js';
import type { Message } from '../model/content.js';
import { approxTokenEstimator, PrefillCounter } from '../tokens/token-estimator.js';
import type { ContextEdit } from './context-edit.js';
import { ContextWindow } from './context-window.js';

/** A transcript: the task, then `steps` steps of an assistant call and its result. */
function transcriptOf(steps: number, thinking = false): Message[] {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'the task' }] }];
  for (let step = 1; step <= steps; step++) {
    messages.push({
      role: 'assistant',
      content: [
        ...(thinking ? [{ type: 'thinking' as const, thinking: `thought ${step}`, signature: 's' }] : []),
        { type: 'text', text: `step ${step}` },
        { type: 'tool_use', id: `c${step}`, name: 'probe', input: { step } },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          toolUseId: `c${step}`,
          content: `result ${step} ${'r'.repeat(step * 7)}`,
          isError: false,
        },
      ],
    });
  }
  return messages;
}

const counter = () => {
  const count = new PrefillCounter(approxTokenEstimator);
  return (message: Message) => count.message(message);
};

/** Every tool call shown is answered by a result shown right after it, and every result answers one. */
function pairingProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role !== 'assistant') continue;
    const calls = message.content
      .filter((block) => block.type === 'tool_use')
      .map((block) => (block as { id: string }).id);
    const next = messages[i + 1];
    const answered = new Set(
      next?.role === 'user'
        ? next.content
            .filter((block) => block.type === 'tool_result')
            .map((block) => (block as { toolUseId: string }).toolUseId)
        : [],
    );
    for (const id of calls) if (!answered.has(id)) problems.push(`call ${id} has no result after it`);
  }
  const called = new Set(
    messages.flatMap((message) =>
      message.role === 'assistant'
        ? message.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id)
        : [],
    ),
  );
  for (const message of messages)
    if (message.role === 'user')
      for (const block of message.content)
        if (block.type === 'tool_result' && !called.has(block.toolUseId))
          problems.push(`result ${block.toolUseId} answers no call shown`);
  return problems;
}

/** Edits a policy could make over a transcript of `steps` steps (message 2k-1 is step k's call). */
const editArbitrary = (steps: number): fc.Arbitrary<ContextEdit> =>
  fc.oneof(
    fc
      .tuple(
        fc.integer({ min: 1, max: steps - 1 }),
        fc.integer({ min: 1, max: steps - 1 }),
        fc.boolean(),
        fc.string(),
      )
      .map(([a, b, summarize, text]): ContextEdit => {
        const first = Math.min(a, b);
        const last = Math.max(a, b);
        return {
          verb: summarize ? 'summarize' : 'evict',
          from: 2 * first - 1,
          to: 2 * last + 1,
          steps: [first, last],
          text,
        };
      }),
    fc.tuple(fc.integer({ min: 1, max: steps }), fc.boolean(), fc.string()).map(
      ([step, admit, text]): ContextEdit => ({
        verb: admit ? 'admit' : 'clear',
        message: 2 * step,
        block: 0,
        step,
        text,
      }),
    ),
    fc
      .integer({ min: 1, max: steps })
      .map((step): ContextEdit => ({ verb: 'drop-thinking', message: 2 * step - 1 })),
    fc
      .tuple(fc.constantFrom('a', 'b', 'c'), fc.string(), fc.constantFrom('start' as const, 'end' as const))
      .map(([key, text, at]): ContextEdit => ({ verb: 'pin', key, text, at })),
  );

describe('ContextWindow', () => {
  it('property: any sequence of edits keeps calls paired with results, leaves the transcript untouched, and rebuilds the same window from its edits', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 2, max: 12 })
          .chain((steps) =>
            fc.tuple(fc.constant(steps), fc.array(editArbitrary(steps), { maxLength: 12 }), fc.boolean()),
          ),
        ([steps, edits, thinking]) => {
          const transcript = transcriptOf(steps, thinking);
          const before = JSON.stringify(transcript);
          const count = counter();
          const window = new ContextWindow(transcript, count);
          const applied: ContextEdit[] = [];
          for (const edit of edits) {
            try {
              window.apply(edit);
              applied.push(edit);
            } catch (error) {
              // Only a partial overlap, or dropping the newest turn's thinking, is refused, labeled.
              expect(isReinsError(error)).toBe(true);
              if (edit.verb === 'drop-thinking') {
                expect(edit.message).toBe(2 * steps - 1);
                expect((error as Error).message).toMatch(/newest assistant turn/);
              } else expect((error as Error).message).toMatch(/overlaps/);
            }
            const shown = window.render();
            expect(pairingProblems(shown.messages)).toEqual([]);
            expect(shown.tokens).toBe(shown.messages.reduce((sum, message) => sum + count(message), 0));
            expect(shown.stablePrefixTokens).toBeLessThanOrEqual(shown.tokens);
            expect(window.measure()).toBe(shown.tokens);
          }
          expect(JSON.stringify(transcript)).toBe(before);
          expect(window.edits).toEqual(applied);
          // A checkpoint or a trace holds the edits; the window they rebuild is the same.
          const rebuilt = new ContextWindow(transcript, counter(), applied);
          expect(JSON.stringify(rebuilt.render().messages)).toBe(JSON.stringify(window.render().messages));
          // The newest step is always shown whole.
          const last = window
            .render()
            .messages.filter((message) => message.role === 'assistant')
            .at(-1);
          expect(JSON.stringify(last?.content.filter((b) => b.type === 'tool_use'))).toContain(
            `"id":"c${steps}"`,
          );
        },
      ),
      { seed: 17, numRuns: 300 },
    );
  });

  it('an unchanged prefix renders as the same objects, so its tokens count as cacheable; an edit says what it invalidated', () => {
    const transcript = transcriptOf(6);
    const window = new ContextWindow(transcript, counter());
    const first = window.render();
    expect(first.firstRender).toBe(true);
    transcript.push(
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c7', name: 'probe', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'c7', content: 'r7', isError: false }] },
    );
    const grown = window.render();
    expect(grown.stablePrefixTokens).toBe(first.tokens);
    expect(grown.invalidatedTokens).toBe(0);
    window.apply({ verb: 'summarize', from: 3, to: 7, steps: [2, 3], text: 'digest of steps 2–3' });
    const edited = window.render();
    // Task and step 1 stay cached; everything the old window sent after them is invalidated.
    const kept = transcript.slice(0, 3).reduce((sum, message) => sum + counter()(message), 0);
    expect(edited.stablePrefixTokens).toBe(kept);
    expect(edited.invalidatedTokens).toBe(grown.tokens - kept);
  });

  it('refuses edits that would break the transcript: a range cutting a step, one hiding the newest step, a block that is not a result', () => {
    const transcript = transcriptOf(4);
    const window = new ContextWindow(transcript, counter());
    const refused = (edit: unknown) => {
      expect(() => window.apply(edit as ContextEdit)).toThrow(/context edit/);
    };
    refused({ verb: 'evict', from: 2, to: 5, steps: [1, 2], text: '' }); // starts at a result
    refused({ verb: 'evict', from: 1, to: 4, steps: [1, 2], text: '' }); // ends mid-step
    refused({ verb: 'evict', from: 1, to: 9, steps: [1, 4], text: '' }); // hides the newest step
    refused({ verb: 'clear', message: 1, block: 0, step: 1, text: '' }); // an assistant message
    refused({ verb: 'pin', key: '', text: 'x', at: 'end' });
    refused({ verb: 'rewrite' });
    refused(null);
    expect(window.edits).toEqual([]);
  });
});
