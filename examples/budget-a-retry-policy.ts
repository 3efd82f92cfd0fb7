/**
 * Budgeting a retry policy with reins/sim: what a per-step failure rate costs when failed steps
 * resume in place versus when the run restarts, exactly and by seeded Monte Carlo, and which
 * timeout is cheapest for a measured latency mixture. Runs offline in a few milliseconds:
 *
 *   npx tsx examples/budget-a-retry-policy.ts
 */
import { retryExact, retryMonteCarlo, timeoutExact } from 'reins/sim';

export function main() {
  // Your numbers: a 12-step agent, 3,000-token prompt, 15 % of steps fail.
  const ours = { steps: 12, system: 3_000, p: 0.15 };
  const inPlace = retryExact({ ...ours, mode: 'inplace' });
  const restart = retryExact({ ...ours, mode: 'restart' });
  const check = retryMonteCarlo({ ...ours, mode: 'inplace' }, { trials: 50_000, seed: 7 });
  if ('skipped' in check) throw new Error(check.skipped);

  // A call-duration mixture measured from traces: 90 % take 1–4 s, 8 % 4–20 s, 2 % hang.
  const timeout = timeoutExact({
    durations: [
      { weight: 0.9, low: 1, high: 4 },
      { weight: 0.08, low: 4, high: 20 },
      { weight: 0.02, low: 120, high: 300 },
    ],
    timeouts: [5, 10, 15, 20, 30],
  });

  return { inPlace, restart, check, timeout };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { inPlace, restart, check, timeout } = main();
  console.log(
    `in place: ×${inPlace.multiplier.toFixed(2)}, gives up ${(inPlace.gaveUpRate * 100).toFixed(2)} %`,
  );
  console.log(`restart:  ×${restart.multiplier.toFixed(2)}`);
  console.log(
    `Monte Carlo (in place): $${check.meanCostUsd.toFixed(5)} per run, 95 % CI $${check.ci95[0].toFixed(5)}–$${check.ci95[1].toFixed(5)}`,
  );
  console.log(
    `cheapest timeout: ${timeout.optimum.timeoutSeconds} s at $${timeout.optimum.exactCostUsd.toFixed(4)} per call`,
  );
}
