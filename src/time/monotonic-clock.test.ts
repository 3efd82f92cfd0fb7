import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeClock } from '../testing/fake-clock.js';
import { monotonicClock, monotonicView } from './monotonic-clock.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('monotonicClock', () => {
  it('reads epoch milliseconds and never goes back when the wall clock steps back', () => {
    const first = monotonicClock.now();
    expect(Math.abs(first - Date.now())).toBeLessThan(5_000);
    vi.spyOn(Date, 'now').mockReturnValue(first - 3_600_000);
    const second = monotonicClock.now();
    expect(second).toBeGreaterThanOrEqual(first);
    expect(Number.isInteger(second)).toBe(true);
  });

  it('fires timers, cancels them, and never fires Infinity', async () => {
    const fired: string[] = [];
    monotonicClock.setTimeout(() => fired.push('a'), 5);
    const cancelled = monotonicClock.setTimeout(() => fired.push('b'), 5);
    monotonicClock.clearTimeout(cancelled);
    const endless = monotonicClock.setTimeout(() => fired.push('c'), Number.POSITIVE_INFINITY);
    await new Promise((resolve) => setTimeout(resolve, 30));
    monotonicClock.clearTimeout(endless);
    expect(fired).toEqual(['a']);
  });
});

describe('monotonicView', () => {
  it('follows the source forward and ignores backward steps', () => {
    const clock = fakeClock();
    const view = monotonicView(clock);
    const start = view.now();
    clock.advance(100);
    expect(view.now()).toBe(start + 100);
    clock.set(clock.now() - 3_600_000);
    expect(view.now()).toBe(start + 100);
    clock.advance(50);
    expect(view.now()).toBe(start + 150);
    expect(monotonicView(monotonicClock)).toBe(monotonicClock);
  });
});
