import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the service saw. */
export interface ServiceHit {
  record: string;
  /** Not the item's first HTTP attempt. */
  retry: boolean;
  atMs: number;
  status: number;
}

export interface EnrichmentServiceOptions {
  /** Answer 503 to everything until this epoch time, then recover. Read on every request, so it can be set after start. */
  outageUntilMs?: number;
}

/**
 * The postmortem's enrichment API, on loopback: 400 for a record missing the now-required
 * `region` field, 200 otherwise; optionally 503 for everything during an outage. It records every
 * request so the benchmark counts attempts from the server's side.
 */
export async function startEnrichmentService(
  options: EnrichmentServiceOptions = {},
): Promise<{ url: string; hits: ServiceHit[]; close: () => Promise<void> }> {
  const hits: ServiceHit[] = [];
  const server: Server = createServer((request, response) => {
    if (request.url === '/health') {
      response.writeHead(200).end('ok');
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      let status = 200;
      let record = '';
      try {
        const parsed = JSON.parse(body) as { id: string; payload: { region?: string } };
        record = parsed.id;
        if (options.outageUntilMs !== undefined && Date.now() < options.outageUntilMs) status = 503;
        else if (typeof parsed.payload?.region !== 'string') status = 400;
      } catch {
        status = 400;
      }
      hits.push({ record, retry: request.headers['x-retry'] === '1', atMs: Date.now(), status });
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(
        status === 200
          ? JSON.stringify({ id: record, enriched: true })
          : JSON.stringify({ error: status === 400 ? 'region is required' : 'unavailable' }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/enrich`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The most retries the service saw in any window of `windowMs`. */
export function peakRetries(hits: readonly ServiceHit[], windowMs = 100): number {
  const times = hits
    .filter((hit) => hit.retry)
    .map((hit) => hit.atMs)
    .sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}
