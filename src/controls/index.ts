export * from './canonical-json.js';
export * from './drift-monitor.js';
export * from './price.js';
export * from './repeat-detector.js';
