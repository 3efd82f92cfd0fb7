import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Tool as McpToolInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../errors/reins-error.js';
import { mcpTools } from './mcp-tools.js';

const object = { type: 'object' as const, properties: {} };

/** An SDK client connected in memory to a server listing `tools` (pages of two) that echoes calls. */
async function clientFor(tools: McpToolInfo[]) {
  const server = new Server({ name: 'memory', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const next = start + 2 < tools.length ? { nextCursor: String(start + 2) } : {};
    return { tools: tools.slice(start, start + 2), ...next };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: JSON.stringify(request.params.arguments) }],
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

describe('mcpTools', () => {
  it('follows pagination, prefixes names and falls back to a description naming the server', async () => {
    const client = await clientFor([
      { name: 'a', inputSchema: object },
      { name: 'b', description: '', title: 'Bee', inputSchema: object },
      { name: 'c', description: 'See.', inputSchema: object },
    ]);
    const set = await mcpTools({ client }, { prefix: 'mem_' });
    expect(set.tools.map((tool) => [tool.name, tool.description])).toEqual([
      ['mem_a', 'The a tool of the MCP server "memory".'],
      ['mem_b', 'Bee'],
      ['mem_c', 'See.'],
    ]);
    expect(set.names.get('mem_a')).toBe('a');
  });

  it('skips, with a reason, a tool whose schema Ajv cannot compile and one that runs only as a task', async () => {
    const client = await clientFor([
      { name: 'fine', inputSchema: object },
      { name: 'broken', inputSchema: { type: 'object', properties: { x: { type: 'nonsense' } } } as never },
      { name: 'long_job', inputSchema: object, execution: { taskSupport: 'required' } },
      {
        name: 'odd_output',
        inputSchema: object,
        outputSchema: { type: 'object', properties: { y: { type: 'nonsense' } } } as never,
      },
    ]);
    const set = await mcpTools({ client });
    expect(set.tools.map((tool) => tool.name)).toEqual(['fine']);
    expect(set.skipped).toEqual([
      { name: 'broken', reason: expect.stringMatching(/^its schema cannot be compiled/) },
      { name: 'long_job', reason: 'it runs only as an MCP task' },
      { name: 'odd_output', reason: expect.stringMatching(/^its schema cannot be compiled/) },
    ]);
  });

  it('refuses two MCP names that become one reins name, and an include naming no tool', async () => {
    const client = await clientFor([
      { name: 'fs.read', inputSchema: object },
      { name: 'fs/read', inputSchema: object },
    ]);
    await expect(mcpTools({ client })).rejects.toSatisfy(isConfigurationError);
    await expect(mcpTools({ client }, { include: ['fs.read', 'fs.write'] })).rejects.toThrow(
      'the server lists no tool "fs.write"',
    );
    const set = await mcpTools({ client }, { include: ['fs/read'] });
    expect(set.tools.map((tool) => tool.name)).toEqual(['fs_read']);
  });

  it('per-tool options win over the server-wide ones; output is never trusted', async () => {
    const client = await clientFor([
      { name: 'look', inputSchema: object, annotations: { readOnlyHint: true } },
      { name: 'change', inputSchema: object },
    ]);
    const set = await mcpTools(
      { client },
      {
        effect: 'read',
        timeoutMs: 5_000,
        maxResultTokens: 100,
        tools: { change: { effect: 'write', maxResultTokens: 50 } },
      },
    );
    expect(
      set.tools.map((tool) => [
        tool.name,
        tool.effect,
        tool.timeoutMs,
        tool.maxResultTokens,
        tool.trustedOutput,
      ]),
    ).toEqual([
      ['look', 'read', 5_000, 100, false],
      ['change', 'write', 5_000, 50, false],
    ]);
  });

  it('sends the validated input as the call’s arguments', async () => {
    const client = await clientFor([
      { name: 'echo', inputSchema: { ...object, properties: { q: { type: 'string' } } } },
    ]);
    const [echo] = (await mcpTools({ client }, { effect: 'read' })).tools;
    const context = {
      signal: new AbortController().signal,
      actor: undefined,
      runId: 'r',
      step: 1,
      callId: 'c',
    };
    await expect(echo?.execute({ q: 'hi' }, context)).resolves.toBe('{"q":"hi"}');
  });
});
