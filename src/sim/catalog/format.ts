import type { Interval } from '../estimate.js';

/** `$0.1904`, `$198`: dollars with enough digits to compare against a post's table. */
export const usd = (x: number, digits = 4) =>
  Number.isFinite(x) ? `$${x.toFixed(Math.abs(x) >= 100 ? 2 : digits)}` : String(x);
export const pct = (x: number, digits = 1) =>
  Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : String(x);
export const times = (x: number, digits = 2) => (Number.isFinite(x) ? `×${x.toFixed(digits)}` : '—');
export const int = (x: number) => Math.round(x).toLocaleString('en-US');
export const num = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
export const range = (ci: Interval, show: (x: number) => string) => `${show(ci[0])} – ${show(ci[1])}`;
