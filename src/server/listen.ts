import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

/** The host names {@link listenOnLoopback} accepts. */
export const loopbackHosts: readonly string[] = ['127.0.0.1', '::1', 'localhost'];

/** A service listening on loopback. */
export interface LoopbackListener {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  /** Stops accepting, ends open event streams, and resolves once the server is closed. */
  close(): Promise<void>;
}

/**
 * Serves a fetch handler (a Hono app) on a loopback address with `@hono/node-server`. Any other
 * host is refused: put a reverse proxy with TLS in front to expose the service.
 *
 * @param options.port - @default 0 (an ephemeral port)
 * @param options.hostname - @default '127.0.0.1'
 */
export async function listenOnLoopback(
  app: { fetch: (request: Request, ...rest: never[]) => Response | Promise<Response> },
  options: { port?: number; hostname?: string } = {},
): Promise<LoopbackListener> {
  const hostname = options.hostname ?? '127.0.0.1';
  if (!loopbackHosts.includes(hostname))
    throw new TypeError(
      `listenOnLoopback: ${hostname} is not a loopback address (${loopbackHosts.join(', ')})`,
    );
  const server = await new Promise<Server>((resolve, reject) => {
    const started = serve(
      {
        fetch: app.fetch as (request: Request) => Response | Promise<Response>,
        hostname,
        port: options.port ?? 0,
      },
      () => resolve(started as Server),
    ) as Server;
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname === '::1' ? '[::1]' : hostname;
  return {
    url: `http://${host}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
