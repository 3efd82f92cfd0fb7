export * from './check-settings.js';
export * from './content.js';
export * from './model.js';
