/** Run-outcome figures from trace events: silent-failure ratio, step-limit rate, cost per success. */
export * from './silent-failure.js';
export * from './trace-stats.js';
export * from './workflow-tell.js';
