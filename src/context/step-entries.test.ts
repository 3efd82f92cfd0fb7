import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from '../model/content.js';
import { cutText, oneLine, recordOfStep } from './step-entries.js';

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

describe('oneLine', () => {
  // The regex pass it skips when the head is one line already: the two must agree on every text.
  const reference = (text: string, max: number) => {
    const flat = (text.length > max * 2 ? cutText(text, 0, max * 2) : text).replace(/\s+/g, ' ').trim();
    return flat.length <= max ? flat : `${cutText(flat, 0, max - 1)}…`;
  };
  const spaces = [
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u2028',
    '\u3000',
    '\ufeff',
    '\u0085',
    '\u200b',
    '\x7f',
  ];

  it('agrees with /\\s+/g → " " and trim on texts made of words and every kind of space', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constantFrom(...spaces),
            fc.string({ maxLength: 6 }),
            fc.string({ unit: 'grapheme', maxLength: 3 }),
          ),
          {
            maxLength: 40,
          },
        ),
        fc.integer({ min: 1, max: 60 }),
        (parts, max) => {
          const text = parts.join('');
          expect(oneLine(text, max)).toBe(reference(text, max));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('one-line heads come back as they are; edge and doubled spaces are flattened', () => {
    expect(oneLine('a b c', 10)).toBe('a b c');
    expect(oneLine(' a b', 10)).toBe('a b');
    expect(oneLine('a b ', 10)).toBe('a b');
    expect(oneLine('a  b', 10)).toBe('a b');
    expect(oneLine('a\u00a0b', 10)).toBe('a b');
    expect(oneLine('abcdefghijkl', 5)).toBe('abcd…');
  });
});
