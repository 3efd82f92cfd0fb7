export { type AgentToolOutput, type AgentToolSpec, agentTool, type SubAgentOptions } from './agent-tool.js';
export * from './approval.js';
export * from './dispatch.js';
export * from './options.js';
export * from './outcome.js';
export { giveUpDefinition, resolveLimits, resumeAgent, runAgent } from './run-agent.js';
export type { RunResult } from './run-result.js';
export * from './run-state.js';
