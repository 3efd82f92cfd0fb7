import type { DriftState } from '../controls/drift-monitor.js';
import type { CheckpointDelta, Slid } from './checkpoint-delta.js';

/**
 * How a window of at most a few entries moved from `before` to `after`: the fewest entries dropped
 * from its front so that what is left starts `after`, and the rest of `after`. Undefined when it did
 * not move.
 */
function slidSince(before: readonly string[], after: readonly string[]): Slid<string> | undefined {
  for (let dropped = 0; dropped <= before.length; dropped++) {
    const kept = before.length - dropped;
    if (kept > after.length) continue;
    let same = true;
    for (let i = 0; i < kept && same; i++) same = before[dropped + i] === after[i];
    if (!same) continue;
    if (dropped === 0 && kept === after.length) return undefined;
    return { dropped, items: after.slice(kept) };
  }
  return { dropped: before.length, items: [...after] };
}

/** The delta's drift fields from `previous` to `next`: a slide when both have windows. */
export function driftSince(
  previous: DriftState | null | undefined,
  next: DriftState | null | undefined,
): Pick<CheckpointDelta, 'drift' | 'driftSlide'> {
  if (!previous || !next) return (previous ?? null) === (next ?? null) ? {} : { drift: next ?? null };
  const actions = slidSince(previous.actions, next.actions);
  const worldStates = slidSince(previous.worldStates, next.worldStates);
  if (!actions && !worldStates) return {};
  return { driftSlide: { ...(actions ? { actions } : {}), ...(worldStates ? { worldStates } : {}) } };
}
