import type { RandomSource } from '../time/clock.js';

/**
 * A backoff schedule. Immutable: `next` returns the delay and the schedule for the attempt after.
 */
export interface Backoff {
  next(random: RandomSource): { delayMs: number; backoff: Backoff };
}

export interface BackoffOptions {
  /** @default 100 */
  baseMs?: number;
  /** @default 20_000 */
  capMs?: number;
}

/** Exponential backoff without jitter: base·2^i, capped. Synchronized across a fleet: for comparison. */
export function exponentialBackoff(options: BackoffOptions = {}, attempt = 0): Backoff {
  const base = options.baseMs ?? 100;
  const cap = options.capMs ?? 20_000;
  return {
    next: () => ({
      delayMs: Math.min(cap, base * 2 ** attempt),
      backoff: exponentialBackoff(options, attempt + 1),
    }),
  };
}

/** Full jitter (AWS): uniform in [0, min(cap, base·2^i)). */
export function fullJitterBackoff(options: BackoffOptions = {}, attempt = 0): Backoff {
  const base = options.baseMs ?? 100;
  const cap = options.capMs ?? 20_000;
  return {
    next: (random) => ({
      delayMs: random() * Math.min(cap, base * 2 ** attempt),
      backoff: fullJitterBackoff(options, attempt + 1),
    }),
  };
}

/**
 * Decorrelated jitter, sampled from `[base, min(cap, previous·3)]`. The common form,
 * `min(cap, uniform(base, previous·3))`, piles delays up exactly on the cap once `previous·3`
 * passes it, re-synchronizing the fleet; sampling below the cap keeps them spread.
 */
export function decorrelatedJitterBackoff(options: BackoffOptions = {}, previousMs?: number): Backoff {
  const base = options.baseMs ?? 100;
  const cap = options.capMs ?? 20_000;
  return {
    next: (random) => {
      const high = Math.max(base, Math.min(cap, (previousMs ?? base) * 3));
      const delayMs = base + random() * (high - base);
      return { delayMs, backoff: decorrelatedJitterBackoff(options, delayMs) };
    },
  };
}

/** The clamped form, kept to show what it gets wrong (see {@link decorrelatedJitterBackoff}). */
export function clampedDecorrelatedJitterBackoff(options: BackoffOptions = {}, previousMs?: number): Backoff {
  const base = options.baseMs ?? 100;
  const cap = options.capMs ?? 20_000;
  return {
    next: (random) => {
      const high = (previousMs ?? base) * 3;
      const delayMs = Math.min(cap, base + random() * (high - base));
      return { delayMs, backoff: clampedDecorrelatedJitterBackoff(options, delayMs) };
    },
  };
}
