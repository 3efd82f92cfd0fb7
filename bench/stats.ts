import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
/** Small helpers shared by the benchmarks: medians, and a table of ratios. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function printTable(
  title: string,
  rows: { name: string; value: number; unit: string }[],
  baseline: string,
): void {
  const base = rows.find((row) => row.name === baseline)?.value ?? Number.NaN;
  console.log(`\n${title}`);
  const width = Math.max(...rows.map((row) => row.name.length));
  for (const row of rows) {
    console.log(
      `  ${row.name.padEnd(width)}  ${row.value.toFixed(2).padStart(10)} ${row.unit}   ${(row.value / base).toFixed(2)}× ${baseline}`,
    );
  }
}

/** The value after `--name` on the command line, if any. */
export function option(name: string, args: readonly string[] = process.argv.slice(2)): string | undefined {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
}

/** `10,50,200` → [10, 50, 200]; undefined stays undefined; anything else is an error. */
export function numberList(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const list = value.split(',').map(Number);
  if (list.some((n) => !Number.isFinite(n) || n <= 0))
    throw new Error(`not a list of positive numbers: ${value}`);
  return list;
}

/** Where and on what a figure was measured, for the results file. */
export function benchMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  } catch {}
  return {
    commit,
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    loadAverage: loadavg().map((value) => Number(value.toFixed(2))),
    measuredAt: new Date().toISOString(),
    ...extra,
  };
}

/**
 * CPU time of this process's main thread so far, in ms (Linux: `/proc/self/task/<pid>/schedstat`,
 * nanoseconds), or undefined where that file is missing. `process.cpuUsage()` also counts the
 * threads that collect garbage and compile in the background; this is the JavaScript thread alone.
 */
export function mainThreadCpuMs(): number | undefined {
  try {
    const line = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8');
    return Number(line.split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}
