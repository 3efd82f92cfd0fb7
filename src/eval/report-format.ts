import type { Interval } from './eval-types.js';

/** Fixed formats for the report's figures, so a report renders the same on every machine. */

export const percent = (share: number | null | undefined): string =>
  share === null || share === undefined || !Number.isFinite(share) ? '—' : `${(share * 100).toFixed(1)} %`;

export const interval = (range: Interval | null | undefined): string =>
  range ? `${(range[0] * 100).toFixed(1)}–${(range[1] * 100).toFixed(1)} %` : '—';

export function usd(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value === 0) return '$0';
  // Three significant digits below a dollar, never in exponent notation.
  const decimals = Math.min(10, Math.max(2, 2 - Math.floor(Math.log10(Math.abs(value)))));
  return `${value < 0 ? '-' : ''}$${Math.abs(value).toFixed(decimals)}`;
}

export const whole = (value: number): string =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—';

export const milliseconds = (value: number): string => `${whole(value)} ms`;

export const multiplier = (value: number | null): string =>
  value === null || !Number.isFinite(value) ? '—' : `×${value.toFixed(value >= 10 ? 0 : 2)}`;
