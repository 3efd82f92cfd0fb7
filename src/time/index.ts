export * from './clock.js';
export * from './monotonic-clock.js';
