import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted reply of the fake provider. */
export type Reply =
  | { kind: 'sse'; events: unknown[]; format: 'anthropic' | 'openai'; disconnectAfter?: number }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  /** Recorded bytes sent as they are (an SSE body, an error body), optionally cut after `cutAt` bytes. */
  | {
      kind: 'raw';
      body: string;
      status?: number;
      contentType?: string;
      headers?: Record<string, string>;
      cutAt?: number;
    };

/**
 * A loopback server speaking the Anthropic Messages and OpenAI Chat Completions wire formats from
 * scripted replies, recording every request body. The official SDKs point their baseURL at it.
 */
export async function startProviderServer(replies: Reply[]) {
  const requests: { path: string; body: unknown }[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      requests.push({ path: request.url ?? '', body: body === '' ? undefined : JSON.parse(body) });
      const reply = replies.shift();
      if (!reply) {
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { type: 'api_error', message: 'no scripted reply left' } }));
        return;
      }
      if (reply.kind === 'raw') {
        response.writeHead(reply.status ?? 200, {
          'content-type': reply.contentType ?? 'text/event-stream',
          ...reply.headers,
        });
        if (reply.cutAt === undefined) {
          response.end(reply.body);
          return;
        }
        response.write(Buffer.from(reply.body).subarray(0, reply.cutAt));
        setTimeout(() => response.socket?.destroy(), 5);
        return;
      }
      if (reply.kind === 'error') {
        response
          .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
          .end(JSON.stringify(reply.body));
        return;
      }
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      reply.events.forEach((event, index) => {
        if (reply.disconnectAfter !== undefined && index >= reply.disconnectAfter) return;
        if (reply.format === 'anthropic')
          response.write(`event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`);
        else response.write(`data: ${JSON.stringify(event)}\n\n`);
      });
      if (reply.disconnectAfter !== undefined) {
        // A dropped connection: the socket closes mid-stream.
        setTimeout(() => response.socket?.destroy(), 5);
        return;
      }
      if (reply.format === 'openai') response.write('data: [DONE]\n\n');
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** The replies still to send; push more between calls. */
    replies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
