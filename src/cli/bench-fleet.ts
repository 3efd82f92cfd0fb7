import { fileURLToPath } from 'node:url';
import pc from 'picocolors';
import { type FleetFigures, type FleetOptions, runFleet } from '../fleet/run-fleet.js';
import { glossary } from './glossary.js';

/** `reins bench fleet`: the $200 night's postmortem (post-14) and an outage, replayed with real processes on loopback. */
export async function benchFleet(json: boolean, overrides: Partial<FleetOptions> = {}): Promise<number> {
  const workerScript = fileURLToPath(new URL('../fleet/fleet-worker.js', import.meta.url));
  const report = await runFleet({
    workerScript,
    ...(json ? {} : { onProgress: (message: string) => process.stderr.write(pc.dim(`${message}\n`)) }),
    ...overrides,
  });
  if (json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    const rows: [string, FleetFigures][] = [
      ['naive (tool 5 × agent 5 × job 3)', report.naive],
      ['reins (classify, breaker, budget, DLQ)', report.reins],
    ];
    console.log(
      pc.bold(
        `\n${glossary.night[0]?.toUpperCase()}${glossary.night.slice(1)}, replayed: ${report.records} records, ${report.poisoned} answer 400, ${report.workers} worker processes`,
      ),
    );
    console.log(
      `  ${'setup'.padEnd(40)} ${'per poisoned'.padStart(12)} ${'attempts'.padStart(9)} ${'enriched'.padStart(9)} ${'dead-lettered'.padStart(14)} ${'wall'.padStart(8)} ${'violations'.padStart(11)}`,
    );
    for (const [name, f] of rows) {
      console.log(
        `  ${name.padEnd(40)} ${f.attemptsPerPoisonedItem.toFixed(2).padStart(12)} ${String(f.totalAttempts).padStart(9)} ${String(f.enriched).padStart(9)} ${String(f.deadLettered).padStart(14)} ${`${(f.wallMs / 1000).toFixed(1)} s`.padStart(8)} ${String(f.budgetViolations).padStart(11)}`,
      );
    }
    const outage = report.outage;
    console.log(pc.bold(`\nOutage: 503 to everything for ${outage.outageMs / 1000} s, then recovery`));
    console.log(
      `  ${'setup'.padEnd(40)} ${'peak retries/100ms'.padStart(19)} ${'attempts'.padStart(9)} ${'enriched'.padStart(9)} ${'breaker opens'.padStart(14)}`,
    );
    for (const [name, f] of [
      ['plain exponential backoff', outage.exponential],
      ['decorrelated jitter', outage.decorrelated],
      ['reins (jitter + shared breaker + budget)', outage.reins],
    ] as [string, FleetFigures][]) {
      console.log(
        `  ${name.padEnd(40)} ${String(f.peakRetriesPer100ms).padStart(19)} ${String(f.totalAttempts).padStart(9)} ${String(f.enriched).padStart(9)} ${`${f.breakerOpens} (+${f.breakerReopens} re)`.padStart(14)}`,
      );
    }
    const ratio =
      outage.decorrelated.peakRetriesPer100ms / Math.max(1, outage.exponential.peakRetriesPer100ms);
    console.log(pc.dim(`\n  decorrelated / exponential peak: ${ratio.toFixed(2)} (goal ≤ 0.33)`));
  }
  return 0;
}
