import { describe, expect, it } from 'vitest';
import { guard, isThenable } from './boundary.js';

const signal = new AbortController().signal;
/** A value whose every trap throws, prototype lookups (`instanceof`) included. */
const hostile = new Proxy(
  {},
  {
    get() {
      throw new Error('get trap');
    },
    getPrototypeOf() {
      throw new Error('prototype trap');
    },
  },
);

describe('the boundary', () => {
  it('a callback returning a Proxy whose prototype trap throws is a value, not a crash', () => {
    expect(isThenable(hostile)).toBe(false);
    expect(() => guard('trace', () => hostile, signal)).not.toThrow();
    expect(guard('trace', () => hostile, signal)).toMatchObject({ ok: true });
  });

  it('promises and thenables are awaited; a throwing callback is labeled with its source', async () => {
    expect(isThenable(Promise.resolve(1))).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: a thenable is what this checks
    expect(isThenable({ then: () => {} })).toBe(true);
    expect(await guard('trace', () => Promise.resolve(2), signal)).toEqual({ ok: true, value: 2 });
    expect(
      guard(
        'world_state',
        () => {
          throw new Error('x');
        },
        signal,
      ),
    ).toMatchObject({ ok: false, source: 'world_state' });
  });
});
