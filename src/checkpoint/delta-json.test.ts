import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolStats } from '../loop/run-state.js';
import type { CheckpointDelta } from './checkpoint-delta.js';
import { deltaJson } from './delta-json.js';

// Numbers JSON writes in its own way: -0, non-finite (as null), tiny and huge floats.
const number = fc.oneof(
  fc.nat(),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 5e-324, 0.1 + 0.2),
);
// Strings that need escaping: quotes, controls, lone surrogates, non-ASCII.
const text = fc.string({ unit: 'binary', maxLength: 8 });
const value = fc.jsonValue({ maxDepth: 2 });
const appended = <T>(item: fc.Arbitrary<T>) =>
  fc.record({ from: fc.nat(9), items: fc.array(item, { maxLength: 3 }) });
const slid = fc.record({ dropped: fc.nat(3), items: fc.array(text, { maxLength: 3 }) });

const toolStats: fc.Arbitrary<ToolStats> = fc.record({
  calls: number,
  ok: number,
  errors: number,
  validationFailures: number,
  validationFailureRate: number,
  truncated: number,
  denied: number,
  approvalsRequested: number,
});

const delta: fc.Arbitrary<CheckpointDelta> = fc.record(
  {
    revision: number,
    status: fc.constantFrom('running' as const, 'ended' as const),
    step: number,
    completedMessages: number,
    usage: fc.record(
      {
        inputTokens: number,
        outputTokens: number,
        cacheReadTokens: number,
        cacheWriteTokens: number,
        reasoningTokens: number,
      },
      { requiredKeys: ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] },
    ),
    billedTokens: number,
    costUsd: number,
    contextTokens: number,
    toolErrors: number,
    elapsedMs: number,
    updatedAt: number,
    trace: fc.record({ segment: number, nextSeq: number }),
    outcome: fc.oneof(fc.constant(null), fc.record({ kind: fc.constant('answered' as const), text })),
    pending: fc.constant(null),
    drift: fc.oneof(
      fc.constant(null),
      fc.record({ actions: fc.array(text, { maxLength: 3 }), worldStates: fc.array(text, { maxLength: 3 }) }),
    ),
    driftSlide: fc.record({ actions: slid, worldStates: slid }, { requiredKeys: [] }),
    messages: appended(
      fc.record({
        role: fc.constant('user' as const),
        content: fc.array(fc.record({ type: fc.constant('text' as const), text })),
      }),
    ),
    repeatCounts: fc.array(fc.tuple(text, number), { maxLength: 3 }),
    taint: fc.oneof(
      fc.constant(null),
      fc.record(
        {
          untrustedResults: number,
          trustedValues: appended(
            fc.oneof(
              text,
              fc.record({
                value: text,
                kind: fc.constant('text' as const),
                source: fc.constant('tool:t' as const),
              }),
            ),
          ),
          privateValues: appended(text),
          counters: fc.array(fc.tuple(text, number), { maxLength: 3 }),
        },
        { requiredKeys: ['untrustedResults'] },
      ),
    ),
    terminalFailures: appended(text),
    // Tool names like `__proto__` live in a null-prototype map, as the loop keeps them.
    toolStats: fc
      .array(fc.tuple(fc.oneof(text, fc.constant('__proto__')), toolStats), { maxLength: 3 })
      .map((entries) =>
        Object.assign(Object.create(null) as Record<string, ToolStats>, Object.fromEntries(entries)),
      ),
    handoffs: appended(
      fc.record({
        kind: fc.constant('draft' as const),
        callId: text,
        tool: text,
        input: value,
        step: fc.nat(),
        reason: text,
      }),
    ),
  },
  {
    requiredKeys: [
      'revision',
      'status',
      'step',
      'completedMessages',
      'usage',
      'billedTokens',
      'costUsd',
      'contextTokens',
      'toolErrors',
      'elapsedMs',
      'updatedAt',
      'trace',
    ],
  },
);

describe('deltaJson', () => {
  it('is the JSON.stringify of any delta', () => {
    fc.assert(
      fc.property(delta, (d) => {
        expect(JSON.parse(deltaJson(d))).toEqual(JSON.parse(JSON.stringify(d)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes a usage or tool stats with fields it does not know as they are', () => {
    const stats = {
      calls: 1,
      ok: 1,
      errors: 0,
      validationFailures: 0,
      validationFailureRate: 0,
      truncated: 0,
      denied: 0,
      approvalsRequested: 0,
      retries: 4,
    };
    const d: CheckpointDelta = {
      revision: 2,
      status: 'running',
      step: 1,
      completedMessages: 3,
      usage: {
        inputTokens: 1,
        outputTokens: 2,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        audioTokens: 9,
      } as never,
      billedTokens: 3,
      costUsd: 0.5,
      contextTokens: 3,
      toolErrors: 0,
      elapsedMs: 7,
      updatedAt: 8,
      trace: { segment: 0, nextSeq: 4 },
      toolStats: { t: stats },
    };
    const parsed = JSON.parse(deltaJson(d));
    expect(parsed.usage.audioTokens).toBe(9);
    expect(parsed.toolStats.t.retries).toBe(4);
    expect(parsed).toEqual(JSON.parse(JSON.stringify(d)));
  });

  it('takes the messages’ JSON made beforehand', () => {
    const message = { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi "there"' }] };
    const d: CheckpointDelta = {
      revision: 2,
      status: 'ended',
      step: 1,
      completedMessages: 1,
      usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      billedTokens: 3,
      costUsd: 0,
      contextTokens: 3,
      toolErrors: 0,
      elapsedMs: 7,
      updatedAt: 8,
      trace: { segment: 0, nextSeq: 4 },
      messages: { from: 0, items: [message] },
    };
    expect(JSON.parse(deltaJson(d, [JSON.stringify(message)]))).toEqual(JSON.parse(JSON.stringify(d)));
  });
});
