import { describe, expect, it } from 'vitest';
import type { Message } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from './token-estimator.js';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const tool: ToolDefinition = { name: 'search', description: 'Search', inputSchema: { type: 'object' } };

/** An estimator that counts characters and records every call it gets. */
function recordingEstimator(hooks: Partial<TokenEstimator> = {}) {
  const calls: string[] = [];
  const estimator: TokenEstimator = {
    name: 'chars',
    countText: (text) => {
      calls.push(`text:${text}`);
      return text.length;
    },
    ...hooks,
  };
  return { estimator, calls };
}

describe('PrefillCounter', () => {
  it('without framing hooks, a request is its system prompt, tools and blocks (the default is unchanged)', () => {
    const counter = new PrefillCounter(approxTokenEstimator);
    const tokens = counter.request({ system: 'abcd', tools: [tool], messages: [user('abcdefgh')] });
    expect(tokens).toBe(1 + Math.ceil(JSON.stringify([tool]).length / 4) + 2);
  });

  it("uses the estimator's countMessage, once per message", () => {
    let sized = 0;
    const { estimator } = recordingEstimator({
      countMessage: (message) => {
        sized++;
        return 100 + message.content.length;
      },
    });
    const counter = new PrefillCounter(estimator);
    const messages = [user('a'), user('b')];
    expect(counter.messages(messages)).toBe(202);
    messages.push(user('c'));
    expect(counter.messages(messages)).toBe(303);
    expect(sized).toBe(3);
  });

  it('adds countFraming once per (system, tools) pair and again when either changes', () => {
    const seen: { system: string; tools: number }[] = [];
    const { estimator } = recordingEstimator({
      countFraming: ({ system, tools }) => {
        seen.push({ system, tools: tools.length });
        return 7;
      },
    });
    const counter = new PrefillCounter(estimator);
    const tools = [tool];
    const messages = [user('xy')];
    expect(counter.request({ system: 'sys', tools, messages })).toBe(
      3 + JSON.stringify(tools).length + 2 + 7,
    );
    counter.request({ system: 'sys', tools, messages });
    counter.request({ system: 'other', tools, messages });
    counter.request({ system: 'other', tools: [], messages });
    expect(seen).toEqual([
      { system: 'sys', tools: 1 },
      { system: 'other', tools: 1 },
      { system: 'other', tools: 0 },
    ]);
  });
});
