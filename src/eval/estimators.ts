// Temporary: replaced by the statistics branch on merge.
import type { RandomSource } from '../time/clock.js';
import type { Distribution, Interval } from './eval-types.js';

export function passAtK(n: number, c: number, k: number): number | null {
  if (n < k) return null;
  if (n - c < k) return 1;
  let product = 1;
  for (let i = n - c + 1; i <= n; i++) product *= 1 - k / i;
  return 1 - product;
}
export function passHatK(n: number, c: number, k: number): number | null {
  if (n < k) return null;
  if (c < k) return 0;
  let product = 1;
  for (let i = 0; i < k; i++) product *= (c - i) / (n - i);
  return product;
}
export function wilsonInterval(successes: number, n: number, z = 1.959964): Interval {
  if (n === 0) return [0, 1];
  const p = successes / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
export function bootstrapInterval(
  values: readonly number[],
  options: { random: RandomSource; resamples?: number; level?: number },
): Interval | null {
  if (values.length === 0) return null;
  const resamples = options.resamples ?? 2000;
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < values.length; i++)
      sum += values[Math.floor(options.random() * values.length)] as number;
    means.push(sum / values.length);
  }
  means.sort((a, b) => a - b);
  const tail = (1 - (options.level ?? 0.95)) / 2;
  return [
    means[Math.floor(tail * (resamples - 1))] as number,
    means[Math.ceil((1 - tail) * (resamples - 1))] as number,
  ];
}
export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { n: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
  return {
    n: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted[sorted.length - 1] as number,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}
