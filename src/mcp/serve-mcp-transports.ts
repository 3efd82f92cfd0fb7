import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importPeers } from '../errors/missing-peer.js';
import type { AnyTool } from '../tools/define-tool.js';
import { createMcpServer, type ServeMcpOptions } from './serve-mcp.js';

const sdkPeer = { name: '@modelcontextprotocol/sdk', range: '^1.32.0' };

/** A running MCP server; `close` stops it. */
export interface ServedMcp {
  close(): Promise<void>;
}

/**
 * Serves reins tools over stdin/stdout, for a host that starts this process (Claude Desktop, an
 * IDE, another agent). Nothing else may write to stdout while it runs.
 *
 * @example
 * await serveMcpStdio([getOrder], { name: 'orders', version: '1.0.0' });
 */
export async function serveMcpStdio(tools: readonly AnyTool[], options: ServeMcpOptions): Promise<ServedMcp> {
  const server = await createMcpServer(tools, options);
  const [{ StdioServerTransport }] = await importPeers('serveMcpStdio (reins/mcp)', [
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/server/stdio.js') },
  ] as const);
  await server.connect(new StdioServerTransport());
  return { close: () => server.close() };
}

/** Where {@link serveMcpHttp} listens. */
export interface ServeMcpHttpOptions extends ServeMcpOptions {
  /** @default 0 (any free port) */
  port?: number;
  /** Loopback unless you say otherwise: these tools act with your rights. @default '127.0.0.1' */
  host?: string;
  /** @default '/mcp' */
  path?: string;
}

/** A running Streamable HTTP MCP server and its endpoint. */
export interface ServedMcpHttp extends ServedMcp {
  url: URL;
}

/**
 * Serves reins tools over Streamable HTTP, statelessly: each POST gets its own server and
 * transport, so no session outlives its request and a restart loses nothing. Binds to loopback by
 * default; put authentication in front before binding anywhere else.
 *
 * @example
 * const served = await serveMcpHttp([getOrder], { name: 'orders', version: '1.0.0', port: 3333 });
 * console.log(`MCP endpoint: ${served.url}`);
 */
export async function serveMcpHttp(
  tools: readonly AnyTool[],
  options: ServeMcpHttpOptions,
): Promise<ServedMcpHttp> {
  // Checked (and the SDK loaded) once, before listening, so a bad tool list fails here.
  await createMcpServer(tools, options);
  const [{ StreamableHTTPServerTransport }] = await importPeers('serveMcpHttp (reins/mcp)', [
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/server/streamableHttp.js') },
  ] as const);
  const path = options.path ?? '/mcp';
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== 'POST') {
      // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const server = await createMcpServer(tools, options);
    const transport = new StreamableHTTPServerTransport({}); // no session id generator: stateless;
    response.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };
  const http = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: new URL(`http://${host}:${address.port}${path}`),
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
