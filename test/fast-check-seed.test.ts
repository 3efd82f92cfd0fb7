import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultPropertySeed, propertySeed } from './support/fast-check-seed.js';

describe('fast-check runs seeded unless asked to explore', () => {
  it('an unseeded property draws the same cases twice (the setup file fixed the seed)', () => {
    const draws = () => {
      const seen: number[] = [];
      fc.assert(
        fc.property(fc.integer(), (n) => {
          seen.push(n);
        }),
        { numRuns: 20 },
      );
      return seen;
    };
    if (process.env.FC_SEED === 'random') return;
    expect(fc.readConfigureGlobal().seed).toBe(propertySeed(process.env.FC_SEED));
    expect(draws()).toEqual(draws());
  });

  it('reads FC_SEED: unset is the default seed, "random" is no seed, anything else is refused', () => {
    expect(propertySeed(undefined)).toBe(defaultPropertySeed);
    expect(propertySeed('')).toBe(defaultPropertySeed);
    expect(propertySeed('random')).toBeUndefined();
    expect(propertySeed('-1263777007')).toBe(-1263777007);
    expect(() => propertySeed('1.5')).toThrow(/FC_SEED must be an integer/);
    expect(() => propertySeed('abc')).toThrow(/FC_SEED must be an integer/);
  });
});
