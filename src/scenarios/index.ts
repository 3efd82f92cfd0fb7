/** The lesson's four scenarios as data, and a runner that plays them against the real loop. */
export * from './incident-tools.js';
export * from './run-scenario.js';
export * from './scenarios.js';
