import { simRandom } from '../sim/random.js';
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
  // One mulberry32 in the project: the simulators' generator, whose state lives in a typed slot.
  const source = simRandom(seed);
  return () => source.uniform();
}

/** A whole number in [min, max] from a random source. */
export function randomInt(random: RandomSource, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
