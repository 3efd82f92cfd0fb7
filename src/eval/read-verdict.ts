import type { Verdict } from './eval-types.js';

/** A predicate's verdict, read: pass or fail, why, and what grading it cost. */
export interface ReadVerdict {
  pass: boolean;
  reason?: string;
  costUsd: number;
  billedTokens: number;
}

const spent = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

const passed: ReadVerdict = Object.freeze({ pass: true, costUsd: 0, billedTokens: 0 });
const failedVerdict: ReadVerdict = Object.freeze({ pass: false, costUsd: 0, billedTokens: 0 });

/** Reads what a predicate returned; anything but a boolean or `{ pass }` fails the trial, saying so. */
export function readVerdict(verdict: Verdict): ReadVerdict {
  if (verdict === true) return passed;
  if (verdict === false) return failedVerdict;
  if (typeof verdict === 'object' && verdict !== null && typeof verdict.pass === 'boolean') {
    const read: ReadVerdict = {
      pass: verdict.pass === true,
      costUsd: spent(verdict.costUsd),
      billedTokens: spent(verdict.billedTokens),
    };
    if (typeof verdict.reason === 'string') read.reason = verdict.reason;
    return read;
  }
  return {
    pass: false,
    reason: `the predicate returned ${typeof verdict}, not a boolean or { pass }`,
    costUsd: 0,
    billedTokens: 0,
  };
}
