import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRunState, replayTrace } from '../src/index.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const base = () => JSON.parse(readFileSync(fixture('run-state-v1-happy.json'), 'utf8'));

function withBlock(role: 'user' | 'assistant', block: unknown) {
  const state = base();
  state.messages.push({ role, content: [block] });
  return JSON.stringify(state);
}

describe('frozen fixtures', () => {
  it('run state and trace still load', () => {
    expect(parseRunState(readFileSync(fixture('run-state-v1-happy.json'), 'utf8')).version).toBe(1);
    const events = readFileSync(fixture('trace-v1-loops.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    return replayTrace(events, { runId: 'fixture-loops' }).then((r) => expect(r.matches).toBe(true));
  });
});

describe('parseRunState accepts the new blocks', () => {
  it.each([
    ['assistant', { type: 'thinking', thinking: 't', signature: 's', provider: 'anthropic' }],
    ['assistant', { type: 'redacted_thinking', data: 'd', provider: 'anthropic' }],
    [
      'assistant',
      { type: 'provider', provider: 'anthropic', kind: 'server_tool_use', raw: { type: 'server_tool_use' } },
    ],
    ['user', { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }],
    [
      'user',
      {
        type: 'document',
        source: { type: 'base64', mediaType: 'application/pdf', data: 'JVBE' },
        title: 't',
      },
    ],
    [
      'user',
      {
        type: 'tool_result',
        toolUseId: 'x',
        content: 'c',
        isError: false,
        attachments: [{ type: 'image', source: { type: 'url', url: 'https://x' } }],
      },
    ],
  ])('%s %j', (role, block) => {
    expect(() => parseRunState(withBlock(role as 'user', block))).not.toThrow();
  });
});

// Malformed blocks that a corrupted/edited checkpoint could hold: each should be refused with a
// labeled corrupt_state error naming the field, not accepted and crash/misbehave in an adapter.
describe('parseRunState rejects malformed new blocks', () => {
  it.each([
    ['image source {}', 'user', { type: 'image', source: {} }],
    ['image source type bogus', 'user', { type: 'image', source: { type: 'ftp', url: 'x' } }],
    [
      'image base64 data number',
      'user',
      { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 5 } },
    ],
    ['document source array', 'user', { type: 'document', source: [] }],
    [
      'attachments [null]',
      'user',
      { type: 'tool_result', toolUseId: 'x', content: 'c', isError: false, attachments: [null] },
    ],
    [
      'attachments [text block]',
      'user',
      {
        type: 'tool_result',
        toolUseId: 'x',
        content: 'c',
        isError: false,
        attachments: [{ type: 'text', text: 'hi' }],
      },
    ],
    ['thinking signature number', 'assistant', { type: 'thinking', thinking: 't', signature: 42 }],
    ['thinking provider number', 'assistant', { type: 'thinking', thinking: 't', provider: 42 }],
    ['provider raw array', 'assistant', { type: 'provider', provider: 'anthropic', kind: 'k', raw: [] }],
    ['text citations not array', 'assistant', { type: 'text', text: 't', citations: 'x' }],
  ])('%s', (_label, role, block) => {
    expect(() => parseRunState(withBlock(role as 'user', block))).toThrow(/messages\.\d+\.content\.0/);
  });
});
