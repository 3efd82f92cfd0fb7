export * from './content.js';
export * from './model.js';
