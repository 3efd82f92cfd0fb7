import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from '../model/content.js';
import { runStateJson, TranscriptJson } from './transcript-json.js';

const message = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

const operation = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    texts: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(20), text: fc.string({ maxLength: 6 }) }),
  fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat(20) }),
  fc.record({ kind: fc.constant('since' as const), from: fc.nat(25) }),
  fc.record({ kind: fc.constant('array' as const) }),
);

describe('TranscriptJson', () => {
  it('gives the JSON of the messages as they are now, whatever was kept before', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        const transcript = new TranscriptJson();
        const messages: Message[] = [];
        for (const op of operations) {
          switch (op.kind) {
            case 'append':
              for (const text of op.texts) messages.push(message(text));
              break;
            case 'replace':
              if (op.at < messages.length) messages[op.at] = message(op.text);
              break;
            case 'truncate':
              messages.length = Math.min(op.keep, messages.length);
              break;
            case 'since':
              expect(transcript.since(messages, op.from)).toEqual(
                messages.slice(op.from).map((m) => JSON.stringify(m)),
              );
              break;
            case 'array':
              expect(transcript.array(messages)).toBe(JSON.stringify(messages));
              break;
          }
        }
        expect(transcript.array(messages)).toBe(JSON.stringify(messages));
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes a run state as JSON.stringify does', () => {
    const transcript = new TranscriptJson();
    const state = {
      version: 1 as const,
      runId: 'r',
      status: 'running' as const,
      step: 1,
      system: 'be "careful"',
      messages: [message('a'), message('b\n"c"')],
      completedMessages: 2,
      usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      billedTokens: 3,
      costUsd: 0.25,
      contextTokens: 3,
      toolErrors: 0,
      repeatCounts: [],
      drift: null,
      elapsedMs: 0,
      startedAt: 1,
      updatedAt: 2,
      outcome: null,
    };
    expect(JSON.parse(runStateJson(state, transcript))).toEqual(JSON.parse(JSON.stringify(state)));
    expect(JSON.parse(runStateJson({ ...state, messages: [] }, new TranscriptJson()))).toEqual(
      JSON.parse(JSON.stringify({ ...state, messages: [] })),
    );
  });
});
