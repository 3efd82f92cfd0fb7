import { describe, expect, it } from 'vitest';
import { fakeClock, fakeClockEpoch } from './fake-clock.js';
import { scriptedModel } from './scripted-model.js';
import { seededRandom } from './seeded-random.js';

const request = { system: '', messages: [], tools: [], toolChoice: 'auto' as const };

describe('reins/testing', () => {
  it('scriptedModel fails loudly on an extra call and on unused turns', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }]);
    await model.generate(request);
    expect(() => model.assertDone()).toThrow(/1 of 2 scripted turns were never played/);
    await model.generate(request);
    await expect(model.generate(request)).rejects.toThrow(/call 3 but the script has 2/);
    expect(() => model.assertDone()).toThrow(/beyond the 2-turn script/);
    expect(model.calls).toHaveLength(3);
  });

  it('scriptedModel counts usage with the estimator', async () => {
    const model = scriptedModel([{ text: 'abcdefgh' }]);
    const response = await model.generate({ ...request, system: 'x'.repeat(40) });
    expect(response.usage).toEqual({
      inputTokens: 10,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('fakeClock starts at a real epoch and fires timers in order', () => {
    const clock = fakeClock();
    expect(clock.now()).toBe(fakeClockEpoch);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b'), 20);
    clock.setTimeout(() => fired.push('a'), 10);
    const cancelled = clock.setTimeout(() => fired.push('never'), 15);
    clock.clearTimeout(cancelled);
    clock.advance(25);
    expect(fired).toEqual(['a', 'b']);
    expect(clock.now()).toBe(fakeClockEpoch + 25);
  });

  it('seededRandom is reproducible and spread over [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const values = Array.from({ length: 10_000 }, () => a());
    expect(values.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b()));
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    expect(mean).toBeGreaterThan(0.49);
    expect(mean).toBeLessThan(0.51);
  });
});
