import { describe, expect, it } from 'vitest';
import type { Message } from '../model/content.js';
import { recordOfStep } from './step-entries.js';

describe('recordOfStep', () => {
  it("an id fact names the call that returned it: a digest's fact line says what the id identifies", () => {
    const transcript: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Find the order.' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'c1', name: 'lookup', input: { customer: 'acme-17' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            toolUseId: 'c1',
            content: `${'a long preamble about the account and its history '.repeat(4)}latest order ORD-48213`,
            isError: false,
          },
        ],
      },
    ];
    const record = recordOfStep(transcript, { step: 1, start: 1, end: 3 });
    const fact = record.entries.find((entry) => entry.kind === 'fact');
    expect(fact?.text).toContain('ORD-48213');
    // The id past the decision line's 80 characters is known only from the fact: it must say whose.
    expect(fact?.text).toContain('acme-17');
  });
});
