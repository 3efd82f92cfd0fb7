import { ConfigurationError } from '../errors/reins-error.js';

/** Throws a labeled {@link ConfigurationError} unless `value` is a whole number ≥ `min`. */
export function requireCount(option: string, value: number, min = 0): void {
  if (!Number.isInteger(value) || value < min)
    throw new ConfigurationError(option, `must be a whole number ≥ ${min}, got ${value}`);
}
