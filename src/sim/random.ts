import { seededRandom } from '../testing/seeded-random.js';

/** The draws a simulation needs, all from one seeded stream so a seed reproduces a run bit for bit. */
export interface SimRandom {
  /** Uniform in [0, 1). */
  uniform(): number;
  /** Standard normal (Box–Muller, the spare kept for the next call). */
  normal(): number;
}

/**
 * A seeded source of uniform and normal draws.
 *
 * @example
 * const random = simRandom(7);
 * const latencyMs = Math.exp(6 + 0.6 * random.normal());
 */
export function simRandom(seed: number): SimRandom {
  const uniform = seededRandom(seed);
  let spare = 0;
  let hasSpare = false;
  return {
    uniform,
    normal() {
      if (hasSpare) {
        hasSpare = false;
        return spare;
      }
      // 1 − u is in (0, 1], so the logarithm is finite.
      const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
      const angle = 2 * Math.PI * uniform();
      spare = radius * Math.sin(angle);
      hasSpare = true;
      return radius * Math.cos(angle);
    },
  };
}
