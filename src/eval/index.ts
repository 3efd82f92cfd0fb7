/** Evals that tell the truth: k trials per case, unbiased pass@k and pass^k, failure classes, fault matrices, measured judges. */
export * from './eval-types.js';
