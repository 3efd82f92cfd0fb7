/**
 * `reins/mcp`: MCP servers as reins tools, with every control (`mcpTools`), and reins tools served
 * over MCP (`createMcpServer`, `serveMcpStdio`, `serveMcpHttp`). Needs `@modelcontextprotocol/sdk`,
 * an optional peer dependency loaded on first use, and `ajv` for the servers' JSON Schemas.
 */

export { outputOfCallResult } from './call-result.js';
export type {
  McpConnectedClient,
  McpConnection,
  McpHttpServer,
  McpReconnectOptions,
  McpServerSource,
  McpStdioServer,
} from './mcp-connection.js';
export { annotationsOfEffect, type McpToolAnnotations, mcpEffectOf, mcpIdempotentOf } from './mcp-effect.js';
export { type McpToolOptions, type McpToolSet, type McpToolsOptions, mcpTools } from './mcp-tools.js';
export { createMcpServer, type ServeMcpOptions } from './serve-mcp.js';
export {
  type ServedMcp,
  type ServedMcpHttp,
  type ServeMcpHttpOptions,
  serveMcpHttp,
  serveMcpStdio,
} from './serve-mcp-transports.js';
