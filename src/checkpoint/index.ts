export * from './checkpoint-store.js';
