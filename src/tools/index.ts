export * from './define-tool.js';
export * from './standard-schema.js';
export * from './tool-error.js';
