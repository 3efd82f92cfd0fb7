import { fileURLToPath } from 'node:url';
import pc from 'picocolors';
import {
  type IdempotencyBenchOptions,
  type IdempotencyFigures,
  runIdempotencyBench,
} from '../fleet/run-idempotency.js';

/** `reins bench idempotency`: charges through idempotent tools while workers are killed. */
export async function benchIdempotency(
  json: boolean,
  overrides: Partial<IdempotencyBenchOptions> = {},
): Promise<number> {
  const workerScript = fileURLToPath(new URL('../fleet/charge-worker.js', import.meta.url));
  const report = await runIdempotencyBench({
    workerScript,
    ...(json ? {} : { onProgress: (message: string) => process.stderr.write(pc.dim(`${message}\n`)) }),
    ...overrides,
  });
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return 0;
  }
  console.log(
    pc.bold(
      `\nIdempotent charges: ${report.workers} workers × ${report.operationsPerWorker} operations, faults injected, workers SIGKILLed and restarted`,
    ),
  );
  console.log(
    `  ${'store'.padEnd(26)} ${'operations'.padStart(10)} ${'effects'.padStart(8)} ${'duplicates'.padStart(11)} ${'lost'.padStart(5)} ${'kills'.padStart(6)} ${'ops/s'.padStart(7)} ${'reserve+complete/s'.padStart(19)} ${'relaxed durability'.padStart(19)}`,
  );
  const row = (name: string, f: IdempotencyFigures) =>
    console.log(
      `  ${name.padEnd(26)} ${String(f.operations).padStart(10)} ${String(f.effects).padStart(8)} ${(f.duplicates === 0 ? pc.green : pc.red)(String(f.duplicates).padStart(11))} ${(f.lost === 0 ? pc.green : pc.red)(String(f.lost).padStart(5))} ${String(f.kills).padStart(6)} ${f.opsPerSecond.toFixed(0).padStart(7)} ${(f.reserveCompletePerSecond ? f.reserveCompletePerSecond.toFixed(0) : '—').padStart(19)} ${(f.reserveCompletePerSecondRelaxed ? f.reserveCompletePerSecondRelaxed.toFixed(0) : '—').padStart(19)}`,
    );
  for (const [name, figures] of Object.entries(report.stores)) row(name, figures);
  row('sqlite, no reconcile hook', report.withoutReconcile);
  console.log(
    pc.dim(`\n  unprotected call, same 12 processes: ${report.unprotectedPerSecond.toFixed(0)} calls/s`),
  );
  return 0;
}
