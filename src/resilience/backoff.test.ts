import { describe, expect, it } from 'vitest';
import { fakeClock } from '../testing/fake-clock.js';
import { seededRandom } from '../testing/seeded-random.js';
import {
  type Backoff,
  clampedDecorrelatedJitterBackoff,
  decorrelatedJitterBackoff,
  exponentialBackoff,
  fullJitterBackoff,
} from './backoff.js';
import { sleep } from './sleep.js';

function delays(backoff: Backoff, count: number, seed: number): number[] {
  const random = seededRandom(seed);
  const out: number[] = [];
  let current = backoff;
  for (let i = 0; i < count; i++) {
    const step = current.next(random);
    out.push(step.delayMs);
    current = step.backoff;
  }
  return out;
}

describe('backoff', () => {
  it('exponential doubles to the cap; full jitter stays under it', () => {
    expect(delays(exponentialBackoff({ baseMs: 100, capMs: 1_000 }), 6, 1)).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    const jittered = delays(fullJitterBackoff({ baseMs: 50, capMs: 20_000 }), 20, 2);
    jittered.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(Math.min(20_000, 50 * 2 ** i));
    });
  });

  it('decorrelated jitter sampled below the cap does not pile up on it; the clamped form does', () => {
    const options = { baseMs: 100, capMs: 2_000 };
    let atCapSampled = 0;
    let atCapClamped = 0;
    const runs = 2_000;
    for (let seed = 1; seed <= runs; seed++) {
      // The 8th retry of each simulated client.
      if (delays(decorrelatedJitterBackoff(options), 8, seed)[7] === 2_000) atCapSampled++;
      if (delays(clampedDecorrelatedJitterBackoff(options), 8, seed)[7] === 2_000) atCapClamped++;
    }
    expect(atCapSampled / runs).toBeLessThan(0.01);
    expect(atCapClamped / runs).toBeGreaterThan(0.25);
    for (const delay of delays(decorrelatedJitterBackoff(options), 50, 7)) {
      expect(delay).toBeGreaterThanOrEqual(100);
      expect(delay).toBeLessThanOrEqual(2_000);
    }
  });
});

describe('sleep', () => {
  it('resolves on the clock, and an abort settles it within one tick with no listener left', async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    }) as typeof remove;

    const done = sleep(1_000, { clock, signal: controller.signal });
    clock.advance(1_000);
    await expect(done).resolves.toBeUndefined();
    expect(listeners).toBe(0);

    const aborted = sleep(60_000, { clock, signal: controller.signal });
    let settled = false;
    aborted.catch(() => {
      settled = true;
    });
    controller.abort('stop');
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(true);
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    expect(clock.pendingTimers).toBe(0);
    expect(listeners).toBe(0);
  });

  it('rejects at once for an already-aborted signal', async () => {
    await expect(sleep(10, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
