import { importPeers } from '../errors/missing-peer.js';

const sdkPeer = { name: '@modelcontextprotocol/sdk', range: '^1.32.0' };

/** The parts of the MCP SDK that `reins/mcp` uses. */
export interface McpSdk {
  client: typeof import('@modelcontextprotocol/sdk/client/index.js');
  stdioClient: typeof import('@modelcontextprotocol/sdk/client/stdio.js');
  httpClient: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  server: typeof import('@modelcontextprotocol/sdk/server/index.js');
  types: typeof import('@modelcontextprotocol/sdk/types.js');
}

let sdkLoad: Promise<McpSdk> | undefined;

/**
 * The MCP SDK, an optional peer dependency imported on first use so `reins/mcp` loads without it;
 * a missing SDK is a labeled error naming what to install.
 */
export function loadMcpSdk(feature: string): Promise<McpSdk> {
  sdkLoad ??= importPeers(feature, [
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/client/index.js') },
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/client/stdio.js') },
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/client/streamableHttp.js') },
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/server/index.js') },
    { ...sdkPeer, load: () => import('@modelcontextprotocol/sdk/types.js') },
  ] as const).then(([client, stdioClient, httpClient, server, types]) => ({
    client,
    stdioClient,
    httpClient,
    server,
    types,
  }));
  // A failed load is not cached: installing the SDK and calling again works.
  sdkLoad.catch(() => {
    sdkLoad = undefined;
  });
  return sdkLoad;
}
