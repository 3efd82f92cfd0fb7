/** `reins/injection`: the prompt-injection benchmark (no live model needed). */
export * from './adaptive.js';
export * from './attacks.js';
export type { BenchInjectionTask, BenchSuite, BenchUserTask } from './bench-suite.js';
export * from './benchmark.js';
export * from './models.js';
export { bankingSuite } from './suites/banking.js';
export { reinsSuites } from './suites/reins-suites.js';
export { slackSuite } from './suites/slack.js';
export { travelSuite } from './suites/travel.js';
export * from './suites.js';
export * from './world.js';
