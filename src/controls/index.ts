export * from './canonical-json.js';
export * from './drift-monitor.js';
export * from './fingerprint.js';
export * from './price.js';
export * from './repeat-detector.js';
export * from './taint-ledger.js';
export * from './taint-policy.js';
export * from './value-kind.js';
