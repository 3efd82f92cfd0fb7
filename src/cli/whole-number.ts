import { InvalidArgumentError } from 'commander';

/** A commander argument parser for a whole-number flag ≥ `min`; anything else is a usage error (exit 2). */
export const wholeNumber = (flag: string, min: number) => (text: string) => {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`${flag} must be a whole number ≥ ${min}, got "${text}"`);
  }
  return value;
};
