/** `reins/injection`: the prompt-injection benchmark (no live model needed). */
export * from './attacks.js';
export * from './benchmark.js';
export * from './models.js';
export * from './suites.js';
export * from './world.js';
