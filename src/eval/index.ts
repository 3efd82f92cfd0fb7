/** Evals that tell the truth: k trials per case, unbiased pass@k and pass^k, failure classes, fault matrices, measured judges. */

export * from './agreement.js';
export { type BootstrapOptions, bootstrapInterval } from './bootstrap-interval.js';
export * from './calibrate-judge.js';
export * from './distribution.js';
export * from './eval-types.js';
export * from './judge.js';
export { preferenceToolName, verdictToolName } from './judge-prompt.js';
export { type InvalidVerdict, type InvalidVerdictReason, normalizeWhitespace } from './judge-response.js';
export * from './judge-summary.js';
export * from './paired-test.js';
export * from './pass-at-k.js';
export * from './quantile.js';
export * from './wilson-interval.js';
