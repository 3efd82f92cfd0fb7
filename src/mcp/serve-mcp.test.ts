import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError } from '../errors/reins-error.js';
import { type AnyTool, defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';
import { mcpTools } from './mcp-tools.js';
import { createMcpServer } from './serve-mcp.js';

const getOrder = defineTool({
  name: 'get_order',
  description: 'Look up one order by id.',
  input: z.object({ orderId: z.string() }),
  effect: 'read',
  execute: ({ orderId }) => {
    if (orderId === 'missing')
      throw new ToolError('No order missing. Check the id with the user.', { code: 'not_found' });
    if (orderId === 'boom')
      throw new Error('connect ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/db.js:41:9)');
    return { orderId, status: 'shipped' };
  },
});
const refund = defineTool({
  name: 'refund',
  description: 'Refund an order.',
  input: z.object({ orderId: z.string(), cents: z.number().int().positive() }),
  effect: 'destructive',
  scopes: ['orders:refund'],
  preconditions: ({ cents }) =>
    cents > 10_000 ? [{ field: 'cents', message: 'refunds over $100 need a manager' }] : [],
  execute: ({ orderId }) => `refunded ${orderId}`,
});
const note = defineTool({
  name: 'add_note',
  description: 'Add a note to an order.',
  input: z.object({ text: z.string() }),
  effect: 'write',
  execute: () => 'ok',
});

async function connected(tools: AnyTool[], actor?: { id: string; scopes: string[] }) {
  const server = await createMcpServer(tools, {
    name: 'orders',
    version: '1.0.0',
    ...(actor ? { actor } : {}),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]?.text;

describe('createMcpServer', () => {
  it('lists each tool with its input schema and annotations derived from its effect', async () => {
    const client = await connected([getOrder, refund, note]);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.annotations])).toEqual([
      ['get_order', { readOnlyHint: true, destructiveHint: false, idempotentHint: true }],
      ['refund', { readOnlyHint: false, destructiveHint: true }],
      ['add_note', { readOnlyHint: false, destructiveHint: false }],
    ]);
    expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['orderId'] });
  });

  it('answers with the result, as text and as structured content', async () => {
    const client = await connected([getOrder]);
    const result = await client.callTool({ name: 'get_order', arguments: { orderId: 'o1' } });
    expect(result.isError).toBeUndefined();
    expect(JSON.parse(textOf(result) ?? '')).toEqual({ orderId: 'o1', status: 'shipped' });
    expect(result.structuredContent).toEqual({ orderId: 'o1', status: 'shipped' });
  });

  it('a ToolError is an isError result with its message; any other error says nothing internal', async () => {
    const client = await connected([getOrder]);
    const missing = await client.callTool({ name: 'get_order', arguments: { orderId: 'missing' } });
    expect(missing).toMatchObject({ isError: true });
    expect(textOf(missing)).toBe('No order missing. Check the id with the user.');
    const boom = await client.callTool({ name: 'get_order', arguments: { orderId: 'boom' } });
    expect(boom).toMatchObject({ isError: true });
    expect(textOf(boom)).toBe(
      'get_order failed with an internal error. Retrying the same call is unlikely to help.',
    );
    expect(JSON.stringify(boom)).not.toMatch(/ECONNREFUSED|db\.js|at /);
  });

  it('checks input, scopes and preconditions before running, each as an isError result', async () => {
    const without = await connected([refund]);
    const denied = await without.callTool({ name: 'refund', arguments: { orderId: 'o1', cents: 5 } });
    expect(textOf(denied)).toMatch(/not allowed for this user \(missing orders:refund\)/);
    const client = await connected([refund], { id: 'u1', scopes: ['orders:refund'] });
    const invalid = await client.callTool({ name: 'refund', arguments: { orderId: 'o1', cents: -1 } });
    expect(invalid).toMatchObject({ isError: true });
    expect(textOf(invalid)).toMatch(/^The input to refund is invalid: cents /);
    const refused = await client.callTool({ name: 'refund', arguments: { orderId: 'o1', cents: 50_000 } });
    expect(textOf(refused)).toBe('cents: refunds over $100 need a manager');
    const done = await client.callTool({ name: 'refund', arguments: { orderId: 'o1', cents: 500 } });
    expect(textOf(done)).toBe('refunded o1');
  });

  it('refuses to serve a tool that hands its calls to a person', async () => {
    const drafted = defineTool({
      name: 'send_letter',
      description: 'Send a letter.',
      input: z.object({ text: z.string() }),
      effect: 'write',
      autonomy: 'draft',
      execute: () => 'sent',
    });
    await expect(createMcpServer([drafted], { name: 'x', version: '1' })).rejects.toSatisfy(
      isConfigurationError,
    );
  });

  it('round trip: reins tools served over MCP come back as reins tools with the same effects', async () => {
    const client = await connected([getOrder, refund, note]);
    const set = await mcpTools({ client }, { trustAnnotations: true });
    expect(set.tools.map((tool) => [tool.name, tool.effect, tool.autonomy])).toEqual([
      ['get_order', 'read', 'autonomous'],
      ['refund', 'destructive', 'confirm'],
      ['add_note', 'write', 'autonomous'],
    ]);
    const context = {
      signal: new AbortController().signal,
      actor: undefined,
      runId: 'r',
      step: 1,
      callId: 'c',
    };
    const getter = set.tools[0] as AnyTool;
    await expect(getter.execute({ orderId: 'o2' }, context)).resolves.toEqual({
      orderId: 'o2',
      status: 'shipped',
    });
    await expect(getter.execute({ orderId: 'missing' }, context)).rejects.toMatchObject({
      code: 'mcp_tool_error',
      message: 'No order missing. Check the id with the user.',
    });
    await set.close();
    // A client passed in is the caller's: closing the set leaves it connected.
    await expect(client.listTools()).resolves.toMatchObject({ tools: expect.any(Array) });
  });
});
