import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, systemClock } from '../time/clock.js';
import { ToolError } from '../tools/tool-error.js';
import type { McpSdk } from './load-sdk.js';

/** A local MCP server reins starts as a child process and talks to over stdin/stdout. */
export interface McpStdioServer {
  command: string;
  args?: readonly string[];
  /** Added to the SDK's safe default environment (PATH, HOME …), not to all of `process.env`. */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
  /** @default 'inherit' */
  stderr?: 'inherit' | 'ignore' | 'pipe';
}

/** A remote MCP server spoken to over Streamable HTTP. */
export interface McpHttpServer {
  url: string | URL;
  /** Headers (an `Authorization`, say) and other fetch options for every request. */
  requestInit?: RequestInit;
}

/** An SDK client you connected yourself. reins neither reconnects nor closes it. */
export interface McpConnectedClient {
  client: Client;
}

/** Where an MCP server is. */
export type McpServerSource = McpStdioServer | McpHttpServer | McpConnectedClient;

/** How reins reconnects after the transport is lost. */
export interface McpReconnectOptions {
  /** Connection attempts per outage before a call fails `mcp_unavailable`. @default 3 */
  attempts?: number;
  /** Wait between attempts. @default 250 */
  delayMs?: number;
}

export interface McpConnectionOptions {
  /** The server's name in error messages. @default the name the server gives, else 'mcp' */
  serverName?: string;
  clientInfo: { name: string; version: string };
  reconnect: Required<McpReconnectOptions>;
  clock?: Clock;
}

/**
 * One client connection to one MCP server, made again when the transport is lost (the child exited,
 * the HTTP server went away), with a bounded number of attempts per outage. Calls share the
 * connection; a call running when it is lost fails `mcp_connection_lost`.
 */
export class McpConnection {
  readonly #sdk: McpSdk;
  readonly #source: McpServerSource;
  readonly #options: McpConnectionOptions;
  readonly #clock: Clock;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #closed = false;
  #serverName: string | undefined;
  /** How many connections were made (the first counts); a test reads it to see a reconnect. */
  connections = 0;

  constructor(sdk: McpSdk, source: McpServerSource, options: McpConnectionOptions) {
    this.#sdk = sdk;
    this.#source = source;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#serverName = options.serverName;
    if ('client' in source) {
      this.#client = source.client;
      this.#serverName ??= source.client.getServerVersion()?.name;
    }
  }

  get serverName(): string {
    return this.#serverName ?? 'mcp';
  }

  /** Every tool the server lists, following pagination. */
  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const client = await this.#ready(signal);
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      // `client.request`, not `client.listTools`: the latter compiles every output schema with the
      // SDK's validator and throws on one it cannot read, losing the whole server for one tool.
      const page = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        this.#sdk.types.ListToolsResultSchema,
        signal ? { signal } : {},
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * One `tools/call`. The signal is the SDK's request signal: aborting it sends
   * `notifications/cancelled` to the server. Output-schema checks are left to reins's boundary.
   */
  async callTool(
    name: string,
    input: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number | undefined },
  ): Promise<CallToolResult> {
    for (let resent = false; ; resent = true) {
      const client = await this.#ready(options.signal);
      try {
        // `client.request`, not `client.callTool`: the latter throws on a structured result that
        // fails its schema, which would reach the model as an opaque failure instead of reins's check.
        return (await client.request(
          { method: 'tools/call', params: { name, arguments: input } },
          this.#sdk.types.CallToolResultSchema,
          // reins's timeout aborts the signal (and so cancels on the server); the SDK's own is only a
          // backstop, set later so it does not win the race and label the call differently.
          { signal: options.signal, timeout: (options.timeoutMs ?? 24 * 60 * 60 * 1_000) + 1_000 },
        )) as CallToolResult;
      } catch (error) {
        if (options.signal.aborted) throw error;
        if (!this.#isTransportLoss(error)) throw this.#labeled(name, error);
        this.#drop(client);
        // A request that never left (the transport was already closed, the connection refused)
        // cannot have taken effect: send it once more, on a new connection, whatever the tool.
        if (!resent && neverSent(error)) continue;
        throw new ToolError(
          `The MCP server "${this.serverName}" went away while ${name} was running, so it may or may not have taken effect. Check before repeating it.`,
          { code: 'mcp_connection_lost', retry: 'after', cause: error },
        );
      }
    }
  }

  /** Closes the connection (ending a stdio child); a client you passed in is left open. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client && !('client' in this.#source)) await client.close();
  }

  async #ready(signal: AbortSignal | undefined): Promise<Client> {
    if (this.#closed)
      throw new ToolError(`The connection to the MCP server "${this.serverName}" was closed.`, {
        code: 'mcp_unavailable',
      });
    if (this.#client) return this.#client;
    if ('client' in this.#source)
      throw new ToolError(`The MCP server "${this.serverName}" is no longer connected.`, {
        code: 'mcp_unavailable',
        retry: 'no',
      });
    this.#connecting ??= this.#reconnect(signal).finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #reconnect(signal: AbortSignal | undefined): Promise<Client> {
    const { attempts, delayMs } = this.#options.reconnect;
    let last: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1 && delayMs > 0) await this.#wait(delayMs, signal);
      signal?.throwIfAborted();
      try {
        const client = await this.#connect();
        if (this.#closed) {
          await client.close();
          break;
        }
        this.#client = client;
        return client;
      } catch (error) {
        last = error;
      }
    }
    throw new ToolError(
      `The MCP server "${this.serverName}" cannot be reached (${attempts} attempt${attempts === 1 ? '' : 's'}). Continue without it or tell the user.`,
      { code: 'mcp_unavailable', retry: 'after', cause: last },
    );
  }

  async #connect(): Promise<Client> {
    const { client: clientModule, stdioClient, httpClient } = this.#sdk;
    const client = new clientModule.Client(this.#options.clientInfo, { capabilities: {} });
    const source = this.#source as McpStdioServer | McpHttpServer;
    const transport =
      'command' in source
        ? new stdioClient.StdioClientTransport({
            command: source.command,
            args: [...(source.args ?? [])],
            env: { ...stdioClient.getDefaultEnvironment(), ...source.env },
            stderr: source.stderr ?? 'inherit',
            ...(source.cwd === undefined ? {} : { cwd: source.cwd }),
          })
        : new httpClient.StreamableHTTPClientTransport(
            new URL(source.url),
            source.requestInit ? { requestInit: source.requestInit } : {},
          );
    this.connections++;
    client.onclose = () => this.#drop(client);
    try {
      await client.connect(transport);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    this.#serverName ??= client.getServerVersion()?.name;
    return client;
  }

  #drop(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.close().catch(() => {});
  }

  /**
   * A closed connection, or a transport that failed to carry the request (a refused or reset HTTP
   * connection, a write to a dead pipe), as opposed to an answer from the server. Read by `code`,
   * not `instanceof`, so a client from another copy of the SDK is judged the same way.
   */
  #isTransportLoss(error: unknown): boolean {
    const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as {
      code?: unknown;
      message?: unknown;
    };
    if (typeof code === 'number') return code === this.#sdk.types.ErrorCode.ConnectionClosed;
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ERR_STREAM_DESTROYED)$/.test(code))
      return true;
    return (
      error instanceof TypeError ||
      (typeof message === 'string' && /not connected|fetch failed|socket hang up/i.test(message))
    );
  }

  /** A protocol error the server answered with: labeled, with the server's words (untrusted, like its output). */
  #labeled(tool: string, error: unknown): ToolError {
    if ((error as { code?: unknown } | null)?.code === this.#sdk.types.ErrorCode.RequestTimeout)
      return new ToolError(`${tool} on the MCP server "${this.serverName}" did not answer in time.`, {
        code: 'timeout',
        retry: 'after',
        cause: error,
      });
    const said = error instanceof Error ? error.message : String(error);
    return new ToolError(
      `${tool} failed on the MCP server "${this.serverName}": ${said.length > 500 ? `${said.slice(0, 500)}…` : said}`,
      { code: 'mcp_protocol_error', cause: error },
    );
  }

  #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#clock.clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = this.#clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The SDK had no transport to send on, or the server refused the connection: nothing was delivered. */
function neverSent(error: unknown): boolean {
  const { message, cause } = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    cause?: { code?: unknown } | null;
  };
  return (typeof message === 'string' && /^not connected$/i.test(message)) || cause?.code === 'ECONNREFUSED';
}
