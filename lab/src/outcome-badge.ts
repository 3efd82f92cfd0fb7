import { describeOutcome, type Outcome } from '../../src/index.js';

/** An outcome's kind as a badge reads it (`over budget`). */
export const outcomeLabel = (outcome: Outcome) => outcome.kind.replace('_', ' ');

/** Shows an outcome on a badge and its cause underneath; the stepper's and the run viewer's. */
export function showOutcome(badge: HTMLElement, cause: HTMLElement, outcome: Outcome): void {
  badge.textContent = outcomeLabel(outcome);
  badge.className = `badge ${outcome.kind}`;
  badge.dataset.value = outcome.kind;
  cause.textContent = describeOutcome(outcome);
}

/** Shows a run still going (or one with no outcome recorded) on the same badge. */
export function showPending(badge: HTMLElement, cause: HTMLElement, label: string, text: string): void {
  badge.textContent = label;
  badge.className = 'badge pending';
  badge.dataset.value = label;
  cause.textContent = text;
}
