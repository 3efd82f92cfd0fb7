import { InvalidArgumentError } from 'commander';

/** A commander argument parser for a whole-number flag ≥ `min`; anything else is a usage error (exit 2). */
export const wholeNumber = (flag: string, min: number) => (text: string) => {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`${flag} must be a whole number ≥ ${min}, got "${text}"`);
  }
  return value;
};

/** A commander argument parser for a finite number > 0; anything else is a usage error (exit 2). */
export const positiveNumber = (flag: string) => (text: string) => {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(`${flag} must be a number > 0, got "${text}"`);
  }
  return value;
};

/** A commander argument parser for a finite number ≥ 0; anything else is a usage error (exit 2). */
export const nonNegativeNumber = (flag: string) => (text: string) => {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${flag} must be a number ≥ 0, got "${text}"`);
  }
  return value;
};
