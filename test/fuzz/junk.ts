import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import type { DrivenClock } from './drive.js';
import { throwingProxy } from './hostile.js';

/**
 * Wrong values for each option of `runAgent`, made fresh per use. Every one must either be refused
 * with a ConfigurationError at call time or run to a labeled outcome.
 */
export function junkFor(clock: DrivenClock, tool: unknown): Record<string, (() => unknown)[]> {
  const numbers = [
    0,
    -1,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    1e308,
    2 ** 53 + 2,
  ];
  const scalars = ['3', '', null, true, false, {}, [], () => 3];
  const anyNumber = [...numbers, ...scalars].map((value) => () => value);
  const basics = [null, 5, 'x', {}, [], true].map((value) => () => value);
  const clockWith = (now: () => unknown) => () => ({
    now,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
  });
  return {
    model: [
      ...basics,
      () => ({ generate: 5 }),
      () => ({ name: 5, generate: () => Promise.resolve(null) }),
      throwingProxy,
    ],
    input: [
      ...basics,
      () => [null],
      () => [{ role: 'system', content: [] }],
      () => [{ role: 'user', content: 'hi' }],
      () => [{ role: 'user', content: [{ type: 5 }] }],
      () => [{ role: 'user', content: [{ type: 'text', text: 5 }] }],
      () => [{ role: 'user', content: [{ type: 'image', url: 'x' }] }],
      () => [{ role: 'user', content: [{ type: 'tool_result' }] }],
      () => [{ role: 'assistant', content: [{ type: 'tool_use', id: 5, name: 'lookup', input: {} }] }],
      () => [{ role: 'user', content: [null] }],
    ],
    tools: [...basics, () => [null], () => [{}], () => [tool, tool], () => ({ length: 1, 0: tool })],
    allowedTools: [...basics, () => ['nope'], () => 'lookup', () => [5]],
    system: [...basics, () => 5n],
    actor: [
      ...basics,
      () => ({ id: 5 }),
      () => ({ id: 'a', scopes: 'admin' }),
      () => ({ id: 'a', scopes: [5] }),
    ],
    authorize: basics,
    worldState: basics,
    prepareStep: basics,
    maxSteps: anyNumber,
    toolConcurrency: anyNumber,
    maxOutputTokens: anyNumber,
    repeatLimit: [...anyNumber, () => 1],
    maxContextTokens: anyNumber,
    maxBilledTokens: anyNumber,
    maxSpendUsd: anyNumber,
    maxWallMs: anyNumber,
    toolTimeoutMs: anyNumber,
    maxResultTokens: anyNumber,
    maxInputChars: anyNumber,
    maxToolErrors: anyNumber,
    onStepLimit: [...basics, () => 'never'],
    finalAnswerPrompt: [...basics, () => ''],
    drift: [
      ...basics,
      () => ({ window: 1 }),
      () => ({ window: 'x' }),
      () => ({ minDistinct: 10 }),
      () => ({ window: Number.NaN, minDistinct: Number.NaN }),
      () => ({ window: 4, minDistinct: 0 }),
    ],
    giveUpTool: [
      ...basics,
      () => ({ name: 5 }),
      () => ({ name: '' }),
      () => ({ name: 'lookup' }),
      () => ({}),
    ],
    writesDisabled: basics,
    taint: [
      ...basics,
      () => ({ enabled: 'no' }),
      () => ({ onTaintedCall: 'maybe' }),
      () => ({ allowWhileTainted: 5 }),
      () => ({ allowWhileTainted: [5] }),
      () => ({ allowWhileTainted: [{ tool: 'lookup', when: 5 }] }),
    ],
    approvals: [...basics, () => [null], () => [{ approvalId: 5, decision: 'approve' }], () => [{}]],
    prices: [
      ...basics,
      () => ({ '*': null }),
      () => ({ '*': { inputUsdPerMillionTokens: -1, outputUsdPerMillionTokens: 1 } }),
      () => ({ '*': { inputUsdPerMillionTokens: 'x', outputUsdPerMillionTokens: 1 } }),
      () => ({ '*': { inputUsdPerMillionTokens: Number.NaN, outputUsdPerMillionTokens: 1 } }),
    ],
    estimator: [
      ...basics,
      () => ({ name: 'nan', countText: () => Number.NaN }),
      () => ({ name: 'negative', countText: () => -10 }),
      () => ({
        name: 'throws',
        countText: () => {
          throw new Error('estimator');
        },
      }),
      () => ({ name: 5, countText: () => 1 }),
      () => ({ name: 'block', countText: () => 1, countBlock: () => 'many' }),
    ],
    trace: [...basics, () => [null], () => ({ write: 5 }), () => [{}]],
    checkpoint: [
      () => 5,
      () => 'x',
      () => ({}),
      () => ({ commit: 5, load: 5 }),
      () => ({ save: 5, load: 5 }),
      () => new MemoryCheckpointStore(),
    ],
    signal: [() => 5, () => ({}), () => ({ aborted: true }), () => 'abort'],
    clock: [
      () => 5,
      () => ({}),
      clockWith(() => Number.NaN),
      clockWith(() => 'noon'),
      clockWith(() => -5),
      () => ({ now: () => 0 }),
    ],
    generateId: [
      () => 5,
      () => () => 5,
      () => () => {
        throw new Error('ids');
      },
    ],
    runId: [() => 5, () => null, () => ({}), () => ''],
    accountSpend: [
      ...basics,
      () => ({ limiter: 5, accountId: 5, limitUsd: 1 }),
      () => ({ limiter: { spent: () => 0, add: () => undefined }, accountId: 'a', limitUsd: -1 }),
    ],
    bogus: [() => 1],
  };
}
