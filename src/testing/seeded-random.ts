import type { RandomSource } from '../time/clock.js';

/**
 * A seeded uniform source in [0, 1) (mulberry32): the same seed gives the same sequence on every
 * machine and runtime.
 *
 * @example
 * const random = seededRandom(42);
 * random(); // always the same first value for seed 42
 */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A whole number in [min, max] from a random source. */
export function randomInt(random: RandomSource, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
