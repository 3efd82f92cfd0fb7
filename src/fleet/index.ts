/** The fleet benchmark (Node, Redis): the $200 postmortem and an outage, replayed on loopback. */
export * from './enrichment-service.js';
export * from './run-fleet.js';
export type { WorkerConfig } from './worker-config.js';
