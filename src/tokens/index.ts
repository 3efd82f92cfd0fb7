export * from './token-estimator.js';
