import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { JsonValue } from '../model/content.js';
import type { Clock } from '../time/clock.js';
import {
  type AnyTool,
  defineTool,
  type ToolAutonomy,
  type ToolContext,
  type ToolEffect,
} from '../tools/define-tool.js';
import { jsonSchemaInput } from '../tools/json-schema-input.js';
import { isToolError } from '../tools/tool-error.js';
import { outputOfCallResult } from './call-result.js';
import { loadMcpSdk } from './load-sdk.js';
import { McpConnection, type McpReconnectOptions, type McpServerSource } from './mcp-connection.js';
import { mcpEffectOf, mcpIdempotentOf } from './mcp-effect.js';

/** What you declare about one tool of an MCP server (or, on {@link McpToolsOptions}, all of them). */
export interface McpToolOptions {
  /**
   * What calling the tool does to the world. Yours to declare: a server's annotations are hints
   * from a process you may not control. @default from annotations when `trustAnnotations`, else 'destructive'
   */
  effect?: ToolEffect;
  /**
   * Calling twice does no more than calling once; such a call is sent again once after the server
   * is reconnected, where any other fails `mcp_connection_lost`.
   * @default true for reads; a trusted server's `idempotentHint`; else false
   */
  idempotent?: boolean;
  /** @default 'confirm' for destructive tools, else 'autonomous' */
  autonomy?: ToolAutonomy;
  /** Scopes the actor must hold. @default [] */
  scopes?: readonly string[];
  /** Per call; forwarded to the server as a cancellation when it fires. @default the run's `toolTimeoutMs` */
  timeoutMs?: number;
  /** The largest result the model is shown; larger ones are cut with a marker. @default 8_000 */
  maxResultTokens?: number;
  /** How to get what a cut result left out, for the truncation marker. */
  paging?: string;
  /** Replaces the server's description (which the model reads, and which you may not control). */
  description?: string;
}

/** Options for {@link mcpTools}. */
export interface McpToolsOptions extends McpToolOptions {
  /** The server's name in error messages. @default the name the server gives, else 'mcp' */
  name?: string;
  /**
   * Read the server's `readOnlyHint`, `destructiveHint` and `idempotentHint` (with the spec's
   * defaults) for tools you declared nothing about. Only for a server you control. @default false
   */
  trustAnnotations?: boolean;
  /** Per-tool declarations, keyed by the MCP tool name; they win over the server-wide ones. */
  tools?: Readonly<Record<string, McpToolOptions>>;
  /** Offer only these MCP tools (least privilege). @default every tool the server lists */
  include?: readonly string[];
  /** Put before every tool name, to keep two servers' tools apart (`fs_`). @default '' */
  prefix?: string;
  reconnect?: McpReconnectOptions;
  /** How reins introduces itself to the server. @default { name: 'reins', version: '0.1.0' } */
  clientInfo?: { name: string; version: string };
  /** For the wait between reconnect attempts. @default the system clock */
  clock?: Clock;
}

/** A server's tools as reins tools, and the connection they share. */
export interface McpToolSet {
  /** Pass these to `runAgent({ tools })`. */
  tools: AnyTool[];
  /** The MCP tool name behind each reins tool name. */
  names: ReadonlyMap<string, string>;
  /** Tools reins could not wrap (an input schema Ajv cannot compile, a tool that needs MCP tasks), and why. */
  skipped: readonly { name: string; reason: string }[];
  /** The shared connection (`connections` counts how often it was made). */
  connection: McpConnection;
  /** Closes the connection and ends a stdio server process. */
  close(): Promise<void>;
}

const defaultMaxResultTokens = 8_000;

/**
 * Lists an MCP server's tools and wraps each as a reins tool with every control: its JSON Schema
 * checked with Ajv before a call is sent, the effect you declare (an undeclared tool of an
 * untrusted server is destructive, so it waits for approval), its output untrusted for the taint
 * guard and capped with a visible marker, `structuredContent` checked against the tool's
 * `outputSchema`, `isError` results and protocol errors turned into labeled tool errors, timeouts
 * and aborts sent to the server as `notifications/cancelled`, and a lost server reconnected.
 * Needs `@modelcontextprotocol/sdk` (an optional peer) and `ajv`.
 *
 * @example
 * const github = await mcpTools(
 *   { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] },
 *   { prefix: 'gh_', effect: 'read', tools: { create_issue: { effect: 'write' } } },
 * );
 * try {
 *   const result = await runAgent({ model, input: 'Summarize open issues', tools: github.tools });
 * } finally {
 *   await github.close();
 * }
 */
export async function mcpTools(source: McpServerSource, options: McpToolsOptions = {}): Promise<McpToolSet> {
  const sdk = await loadMcpSdk('mcpTools (reins/mcp)');
  const connection = new McpConnection(sdk, source, {
    ...(options.name === undefined ? {} : { serverName: options.name }),
    clientInfo: options.clientInfo ?? { name: 'reins', version: '0.1.0' },
    reconnect: {
      attempts: positive('reconnect.attempts', options.reconnect?.attempts ?? 3),
      delayMs: options.reconnect?.delayMs ?? 250,
    },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  try {
    const listed = await connection.listTools();
    const include = options.include === undefined ? undefined : new Set(options.include);
    const tools: AnyTool[] = [];
    const names = new Map<string, string>();
    const skipped: { name: string; reason: string }[] = [];
    for (const info of listed) {
      if (include && !include.has(info.name)) continue;
      const wrapped = await wrap(info, connection, options);
      if (typeof wrapped === 'string') {
        skipped.push({ name: info.name, reason: wrapped });
        continue;
      }
      if (names.has(wrapped.name))
        throw new ConfigurationError(
          'mcpTools',
          `MCP tools "${names.get(wrapped.name)}" and "${info.name}" both become "${wrapped.name}"; offer one with include`,
        );
      names.set(wrapped.name, info.name);
      tools.push(wrapped);
    }
    for (const name of options.include ?? [])
      if (!listed.some((tool) => tool.name === name))
        throw new ConfigurationError('mcpTools.include', `the server lists no tool "${name}"`);
    return { tools, names, skipped, connection, close: () => connection.close() };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

async function wrap(
  info: McpToolInfo,
  connection: McpConnection,
  options: McpToolsOptions,
): Promise<AnyTool | string> {
  if (info.execution?.taskSupport === 'required') return 'it runs only as an MCP task';
  const own = options.tools?.[info.name] ?? {};
  const trust = options.trustAnnotations ?? false;
  const effect = mcpEffectOf(own.effect ?? options.effect, info.annotations, trust);
  const idempotent = mcpIdempotentOf(own.idempotent ?? options.idempotent, effect, info.annotations, trust);
  const inputJsonSchema = withoutDialect(info.inputSchema);
  const input = jsonSchemaInput<Record<string, unknown>>(inputJsonSchema);
  const outputJsonSchema = info.outputSchema === undefined ? undefined : withoutDialect(info.outputSchema);
  const output = outputJsonSchema === undefined ? undefined : jsonSchemaInput<unknown>(outputJsonSchema);
  try {
    // Compiled now, so a schema Ajv cannot read is reported here, not on the model's first call.
    await input['~standard'].validate({});
    if (output) await output['~standard'].validate({});
  } catch (error) {
    return `its schema cannot be compiled: ${error instanceof Error ? error.message : String(error)}`;
  }
  const timeoutMs = own.timeoutMs ?? options.timeoutMs;
  const autonomy = own.autonomy ?? options.autonomy;
  const paging = own.paging ?? options.paging;
  const scopes = own.scopes ?? options.scopes;
  const description =
    own.description ??
    nonEmpty(info.description) ??
    nonEmpty(info.title) ??
    `The ${info.name} tool of the MCP server "${connection.serverName}".`;
  const send = (arguments_: Record<string, unknown>, context: ToolContext) =>
    connection.callTool(info.name, arguments_, { signal: context.signal, timeoutMs });
  return defineTool({
    name: reinsName(`${options.prefix ?? ''}${info.name}`),
    description,
    input,
    inputJsonSchema,
    effect,
    ...(autonomy === undefined ? {} : { autonomy }),
    ...(scopes === undefined ? {} : { scopes }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(paging === undefined ? {} : { paging }),
    ...(output === undefined ? {} : { output }),
    maxResultTokens: own.maxResultTokens ?? options.maxResultTokens ?? defaultMaxResultTokens,
    // Never trusted: whatever the server sends may carry instructions meant for the model.
    trustedOutput: false,
    execute: async (arguments_, context) => {
      let result: Awaited<ReturnType<typeof send>>;
      try {
        result = await send(arguments_, context);
      } catch (error) {
        // An idempotent call lost with its connection is sent once more, on a new connection.
        if (!(idempotent && isToolError(error) && error.code === 'mcp_connection_lost')) throw error;
        result = await send(arguments_, context);
      }
      return outputOfCallResult(result, info.name, output !== undefined);
    },
  });
}

/** A provider-safe tool name: letters, digits, `_` and `-`, at most 64 characters. */
function reinsName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'mcp_tool';
}

/** The schema without `$schema`: Ajv compiles the draft it knows, and providers do not want it. */
function withoutDialect(schema: object): { [key: string]: JsonValue } {
  const { $schema: _dialect, ...rest } = schema as { [key: string]: JsonValue };
  return rest;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text;
}

function positive(option: string, value: number): number {
  if (!(Number.isInteger(value) && value > 0))
    throw new ConfigurationError(`mcpTools.${option}`, `must be a whole number > 0, got ${value}`);
  return value;
}
