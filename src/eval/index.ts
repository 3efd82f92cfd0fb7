/** Evals that tell the truth: k trials per case, unbiased pass@k and pass^k, failure classes, fault matrices, measured judges. */
export * from './escape-html.js';
export * from './eval-report.js';
export * from './eval-types.js';
export * from './failure-class.js';
export * from './fault-injection.js';
export * from './fault-matrix.js';
export * from './fault-suite.js';
export * from './parse-eval-report.js';
export * from './render-eval-html.js';
export * from './report-charts.js';
export * from './report-style.js';
export * from './report-tables.js';
export * from './report-trials.js';
export * from './results-store.js';
export * from './run-eval.js';
export * from './trial-seed.js';
export * from './trial-trajectory.js';
