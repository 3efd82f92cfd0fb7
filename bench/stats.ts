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
