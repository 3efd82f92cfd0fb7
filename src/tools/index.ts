/**
 * `reins/tools`: everything for defining tools, plus `jsonSchemaInput` for raw JSON Schema inputs
 * (MCP tools), validated with Ajv. The core `reins` entry re-exports all but that one, so it stays
 * free of dependencies.
 */

export * from './attachments.js';
export * from './define-tool.js';
export * from './json-schema-input.js';
export * from './plan-calls.js';
export * from './quarantined-extractor.js';
export * from './result-size.js';
export * from './standard-schema.js';
export * from './tool-error.js';
