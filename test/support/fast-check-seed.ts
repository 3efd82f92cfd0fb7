/**
 * Vitest setup file: every fast-check property that does not pass its own `seed` runs with one
 * fixed seed, so `npm test` draws the same cases on every machine and a failure in CI is a failure
 * on a laptop. `FC_SEED=<integer>` replays another seed; `FC_SEED=random` explores (fast-check's
 * report prints the seed of a failure, to replay and then pin in a regression test).
 */
import fc from 'fast-check';

export const defaultPropertySeed = 20_261_204;

export function propertySeed(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return defaultPropertySeed;
  if (value === 'random') return undefined;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) {
    throw new Error(`FC_SEED must be an integer or "random", got ${JSON.stringify(value)}`);
  }
  return seed;
}

const seed = propertySeed(process.env.FC_SEED);
if (seed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
