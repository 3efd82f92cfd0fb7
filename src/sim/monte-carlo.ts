import { SimParameterError } from './params.js';

/** How a Monte Carlo run is drawn: how many trials, from which seed, reporting progress how. */
export interface MonteCarloOptions {
  /** @default the trial count of the post the model comes from */
  trials?: number;
  /** @default 1 */
  seed?: number;
  /** Called every few thousand trials and once at the end; the CLI draws a bar, the lab a meter. */
  onProgress?: (done: number, total: number) => void;
}

/** Why a Monte Carlo cross-check did not run (it would take too long to be useful). */
export interface SkippedMonteCarlo {
  skipped: string;
}

/** Checks a trial count and seed, filling in defaults. */
export function monteCarloSettings(
  options: MonteCarloOptions | undefined,
  defaultTrials: number,
): {
  trials: number;
  seed: number;
  report: ((done: number, total: number) => void) | undefined;
  finish: () => void;
} {
  const trials = options?.trials ?? defaultTrials;
  const seed = options?.seed ?? 1;
  if (!Number.isSafeInteger(trials) || trials < 1) {
    throw new SimParameterError(
      { key: 'trials', flag: '--trials' },
      `must be a whole number ≥ 1, got ${trials}`,
    );
  }
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new SimParameterError({ key: 'seed', flag: '--seed' }, `must be a whole number ≥ 0, got ${seed}`);
  }
  const report = options?.onProgress;
  // Loops report every 4,096 trials with an inline bit test: a per-call closure here would
  // change the call target on every run and deoptimize the hot loop.
  return { trials, seed, report, finish: report ? () => report(trials, trials) : () => {} };
}
