/**
 * reins: production controls for LLM agents. The core runs in any JavaScript runtime: no Node
 * built-ins, no runtime dependencies.
 */
export * from './budget/index.js';
export * from './checkpoint/index.js';
export * from './controls/index.js';
export * from './errors/index.js';
export * from './loop/index.js';
export * from './model/index.js';
export * from './stats/index.js';
export * from './time/index.js';
export * from './tokens/index.js';
export * from './tools/attachments.js';
export * from './tools/define-tool.js';
export * from './tools/plan-calls.js';
export * from './tools/quarantined-extractor.js';
export * from './tools/result-size.js';
export * from './tools/standard-schema.js';
export * from './tools/tool-error.js';
export * from './tools/untrusted-result.js';
export * from './trace/index.js';
