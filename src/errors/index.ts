export * from './error-info.js';
export * from './reins-error.js';
