import type { Outcome } from '../loop/outcome.js';

/**
 * The outcomes that end a run quietly without doing the task: nothing was thrown, the run returned a
 * result, and the task is not done. `step_limit`, `over_budget`, `looped`, `gave_up`, `truncated`
 * and `refused`. Not in it: `answered` (the one success), `hard_error` (loud: it is the failure an
 * exception counter already sees), `cancelled` (the caller stopped the run), and the two that are
 * not endings at all, `awaiting_approval` (paused) and `stale_state` (nothing ran).
 */
export const silentFailureKinds = [
  'step_limit',
  'over_budget',
  'looped',
  'gave_up',
  'truncated',
  'refused',
] as const satisfies readonly Outcome['kind'][];

/** One of {@link silentFailureKinds}. */
export type SilentFailureKind = (typeof silentFailureKinds)[number];

const silent: ReadonlySet<string> = new Set(silentFailureKinds);

/** True for an outcome in {@link silentFailureKinds}. */
export function isSilentFailure(kind: Outcome['kind']): kind is SilentFailureKind {
  return silent.has(kind);
}

/**
 * True when the outcome ends the run, so it counts in the ratios' denominators: every kind but
 * `awaiting_approval` (the run will go on) and `stale_state` (nothing ran).
 */
export function isEnding(kind: Outcome['kind']): boolean {
  return kind !== 'awaiting_approval' && kind !== 'stale_state';
}
