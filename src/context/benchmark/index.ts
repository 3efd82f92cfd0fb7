/**
 * The context benchmark's reins part (`reins bench context`, `bench/context.ts`): the bill by run
 * length, the seeds' arithmetic reproduced, and the needle harness. Not a public subpath: the CLI
 * and the bench import it from here.
 */
export * from './bill-run.js';
export * from './context-benchmark.js';
export * from './context-tables.js';
export * from './needle-agent.js';
export * from './needle-plan.js';
export * from './needle-run.js';
export * from './recall-score.js';
export * from './seed-cost-models.js';
