import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '../testing/seeded-random.js';

export interface PaymentsServiceOptions {
  /** Share of charges applied and then answered too late (the caller times out after the effect). @default 0.05 */
  lateAnswerRate?: number;
  /** Share of requests whose connection is reset before anything is applied. @default 0.05 */
  resetRate?: number;
  /** How late a late answer is. @default 400 */
  lateMs?: number;
  seed?: number;
}

/**
 * A payments API on loopback that performs every charge it receives (it does not deduplicate)
 * and can say whether a charge with a given key exists, which is what `reconcile` asks. Faults are
 * injected from a seeded source.
 */
export async function startPaymentsService(options: PaymentsServiceOptions = {}) {
  const ledger: { key: string; amountCents: number; atMs: number }[] = [];
  const byKey = new Map<string, number>();
  const random = seededRandom(options.seed ?? 13);
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url?.startsWith('/charges/')) {
      const key = decodeURIComponent(request.url.slice('/charges/'.length));
      const index = byKey.get(key);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(index === undefined ? { exists: false } : { exists: true, chargeId: `ch_${index}` }),
      );
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const roll = random();
      if (roll < (options.resetRate ?? 0.05)) {
        request.socket.destroy();
        return;
      }
      const { key, amountCents } = JSON.parse(body) as { key: string; amountCents: number };
      ledger.push({ key, amountCents, atMs: Date.now() });
      if (!byKey.has(key)) byKey.set(key, ledger.length - 1);
      const answer = () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ chargeId: `ch_${byKey.get(key)}` }));
      };
      if (roll < (options.resetRate ?? 0.05) + (options.lateAnswerRate ?? 0.05))
        setTimeout(answer, options.lateMs ?? 400);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ledger,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
