import { describe, expect, it } from 'vitest';
import type { Message } from '../model/content.js';
import { simulatedPromptCache } from './simulated-prompt-cache.js';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
// 4 characters a token: `system` is 100 tokens, each message 10.
const system = 's'.repeat(400);
const task = user('t'.repeat(40));
const turn = (i: number) => assistant(`${i}`.padEnd(40, 'a'));
const request = (...messages: Message[]) => ({ system, tools: [], messages });

describe('simulatedPromptCache', () => {
  it('stable prefix: the first call writes system and task, later calls read them and pay the rest as input', () => {
    const cache = simulatedPromptCache();
    expect(cache.bill(request(task))).toEqual({ cacheReadTokens: 0, cacheWriteTokens: 110, inputTokens: 0 });
    expect(cache.bill(request(task, turn(1), user('r'.repeat(40))))).toEqual({
      cacheReadTokens: 110,
      cacheWriteTokens: 0,
      inputTokens: 20,
    });
  });

  it('a changed system prompt misses: the prefix is matched by content', () => {
    const cache = simulatedPromptCache();
    cache.bill(request(task));
    expect(cache.bill({ system: `${system}!`, tools: [], messages: [task] }).cacheReadTokens).toBe(0);
    // Equal content in a new object still hits.
    expect(cache.bill(request(user('t'.repeat(40)))).cacheReadTokens).toBe(110);
  });

  it('rolling: a request that extends the previous one reads all of it; an edit before the end falls back', () => {
    const cache = simulatedPromptCache({ breakpoints: 'rolling' });
    cache.bill(request(task, turn(1)));
    expect(cache.bill(request(task, turn(1), turn(2)))).toEqual({
      cacheReadTokens: 120,
      cacheWriteTokens: 10,
      inputTokens: 0,
    });
    // turn(1) replaced (a summary): only the stable prefix is still held.
    expect(cache.bill(request(task, user('digest'.padEnd(40)), turn(2)))).toEqual({
      cacheReadTokens: 110,
      cacheWriteTokens: 20,
      inputTokens: 0,
    });
  });
});
