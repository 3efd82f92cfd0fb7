import type { CascadeAttempt, CascadeRecord } from './cascade-record.js';

const usd = (value: number) => `$${value.toFixed(6)}`;

/**
 * One line saying what a cascade did, for `reins trace show`:
 * `cheap escalated (structural: the text is not JSON; $0.000150) → strong answered ($0.002250)`.
 */
export function describeRouting(record: CascadeRecord): string {
  const degraded = record.degraded ? ` — degraded: kept ${record.answeredBy.name}'s doubted answer` : '';
  return `${record.attempts.map(describeAttempt).join(' → ')}${degraded}`;
}

function describeAttempt(attempt: CascadeAttempt): string {
  switch (attempt.kind) {
    case 'escalated': {
      const details = [`${attempt.trigger}: ${attempt.reason}`];
      if (attempt.costUsd !== undefined) details.push(usd(attempt.costUsd));
      if (attempt.triggerCostUsd !== undefined) details.push(`deciding ${usd(attempt.triggerCostUsd)}`);
      return `${attempt.name} escalated (${details.join('; ')})`;
    }
    case 'answered':
      return `${attempt.name} answered${attempt.costUsd === undefined ? '' : ` (${usd(attempt.costUsd)})`}`;
    case 'skipped':
      return `${attempt.name} skipped (breaker open, retry in ${attempt.retryInMs} ms)`;
    case 'failed':
      return `${attempt.name} failed (${attempt.error})`;
  }
}
