import fc from 'fast-check';
import type { DrivenClock } from './drive.js';
import { type HostileTag, hostile, hostileTag } from './hostile.js';

/**
 * How one invocation of user code (a tool, a callback, a model) behaves: returns a value now or
 * later, throws or rejects with a hostile value, returns one, or never settles.
 */
export type Behavior<V> =
  | { kind: 'return'; value: V }
  | { kind: 'resolve'; value: V; delayMs: number }
  | { kind: 'throw'; tag: HostileTag }
  | { kind: 'reject'; tag: HostileTag; delayMs: number }
  | { kind: 'returnHostile'; tag: HostileTag }
  | { kind: 'hang' };

export interface BehaviorOptions {
  /** Never-settling and delayed behaviours (only with a `maxWallMs` to end them). */
  hang: boolean;
  /** Weight of well-behaved returns against everything else. @default 3 */
  goodWeight?: number;
}

const delay = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40_000 }));

export function behavior<V>(value: fc.Arbitrary<V>, options: BehaviorOptions): fc.Arbitrary<Behavior<V>> {
  const good = options.goodWeight ?? 3;
  const arbitraries: fc.WeightedArbitrary<Behavior<V>>[] = [
    { weight: good, arbitrary: value.map((v) => ({ kind: 'return' as const, value: v })) },
    {
      weight: 1,
      arbitrary: fc
        .record({ value, delayMs: options.hang ? delay : fc.constant(0) })
        .map((r) => ({ kind: 'resolve' as const, ...r })),
    },
    { weight: 1, arbitrary: hostileTag.map((tag) => ({ kind: 'throw' as const, tag })) },
    {
      weight: 1,
      arbitrary: fc
        .record({ tag: hostileTag, delayMs: options.hang ? delay : fc.constant(0) })
        .map((r) => ({ kind: 'reject' as const, ...r })),
    },
    { weight: 1, arbitrary: hostileTag.map((tag) => ({ kind: 'returnHostile' as const, tag })) },
  ];
  if (options.hang) arbitraries.push({ weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) });
  return fc.oneof(...arbitraries);
}

/** A list of behaviours played in turn (the last one repeats). */
export function behaviors<V>(value: fc.Arbitrary<V>, options: BehaviorOptions) {
  return fc.array(behavior(value, options), { minLength: 1, maxLength: 4 });
}

export function good<V>(value: V): Behavior<V> {
  return { kind: 'return', value };
}

/** Plays one behaviour; `build` turns the generated value into the real one (a fresh object, a closure). */
export function play<V, R>(played: Behavior<V>, clock: DrivenClock, build: (value: V) => R): R | Promise<R> {
  switch (played.kind) {
    case 'return':
      return build(played.value);
    case 'resolve':
      if (played.delayMs === 0) return Promise.resolve().then(() => build(played.value));
      // A value that throws when built (a ToolError to raise) rejects, as it would from an async function.
      return new Promise<R>((resolve, reject) =>
        clock.setTimeout(() => {
          try {
            resolve(build(played.value));
          } catch (thrown) {
            reject(thrown);
          }
        }, played.delayMs),
      );
    case 'throw':
      throw hostile(played.tag);
    case 'reject':
      if (played.delayMs === 0) return Promise.reject(hostile(played.tag));
      return new Promise<R>((_, reject) =>
        clock.setTimeout(() => reject(hostile(played.tag)), played.delayMs),
      );
    case 'returnHostile':
      return hostile(played.tag) as R;
    case 'hang':
      return new Promise<R>(() => {});
  }
}

/** Plays a list of behaviours, one per invocation, repeating the last. */
export function player<V, R>(list: readonly Behavior<V>[], clock: DrivenClock, build: (value: V) => R) {
  let calls = 0;
  return (): R | Promise<R> => {
    const next = list[Math.min(calls++, list.length - 1)] as Behavior<V>;
    return play(next, clock, build);
  };
}
