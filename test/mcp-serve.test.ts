import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../src/loop/run-agent.js';
import { type McpServerSource, type McpToolSet, mcpTools } from '../src/mcp/index.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { toolResults } from './support/mcp-fixture.js';

// reins tools served by serveMcpStdio / serveMcpHttp in a child process (from dist: `npm test`
// builds first), called back through mcpTools as any MCP server would be.
const fixture = new URL('./fixtures/reins-mcp-server.mjs', import.meta.url).pathname;
let httpChild: ChildProcess | undefined;
let httpUrl: string;

beforeAll(async () => {
  httpChild = spawn(process.execPath, [fixture, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: httpChild.stdout as NodeJS.ReadableStream });
  httpUrl = await new Promise<string>((resolve, reject) => {
    httpChild?.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    lines.on('line', (line) => {
      const match = /^listening (\S+)$/.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
  });
});

afterAll(() => {
  httpChild?.kill('SIGKILL');
});

describe.each(['stdio', 'http'] as const)('reins tools served over MCP (%s)', (transport) => {
  let set: McpToolSet;
  beforeAll(async () => {
    const source: McpServerSource =
      transport === 'stdio'
        ? { command: process.execPath, args: [fixture], stderr: 'ignore' }
        : { url: httpUrl };
    set = await mcpTools(source, { trustAnnotations: true });
  });
  afterAll(() => set?.close());

  it('annotations derived from each effect come back as the same effects', () => {
    expect(set.tools.map((tool) => [tool.name, tool.effect])).toEqual([
      ['get_order', 'read'],
      ['cancel_order', 'destructive'],
      ['add_note', 'write'],
    ]);
    expect(set.tools[0]?.inputJsonSchema).toMatchObject({ required: ['orderId'] });
  });

  it('errors are isError results with the model-facing message only, and the run goes on', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'get_order', input: { orderId: 'o1' } },
          { id: 'b', name: 'get_order', input: { orderId: 'missing' } },
          { id: 'c', name: 'get_order', input: { orderId: 'boom' } },
        ],
      },
      { text: 'done' },
    ]);
    const result = await runAgent({ model, input: 'go', tools: set.tools });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'done' });
    const [found, missing, boom] = toolResults(result.messages);
    expect(found?.content).toContain('"status":"shipped"');
    expect(JSON.parse(missing?.content ?? '')).toMatchObject({
      error: { code: 'mcp_tool_error', message: 'No order "missing". Ask the user for the id.' },
    });
    expect(JSON.parse(boom?.content ?? '')).toMatchObject({
      error: {
        code: 'mcp_tool_error',
        message: 'get_order failed with an internal error. Retrying the same call is unlikely to help.',
      },
    });
    expect(boom?.content).not.toMatch(/hunter2|db\.js/);
  });

  it('a served destructive tool still waits for approval on the calling side', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'a', name: 'cancel_order', input: { orderId: 'o1' } }] },
    ]);
    const result = await runAgent({ model, input: 'go', tools: set.tools });
    expect(result.outcome).toMatchObject({ kind: 'awaiting_approval', requests: [{ tool: 'cancel_order' }] });
  });
});

describe('serveMcpHttp', () => {
  it('binds loopback by default', () => {
    expect(new URL(httpUrl).hostname).toBe('127.0.0.1');
  });

  it('is stateless: a GET (server stream) is refused with 405, an unknown path with 404', async () => {
    expect((await fetch(httpUrl)).status).toBe(405);
    expect((await fetch(new URL('/other', httpUrl))).status).toBe(404);
  });
});
