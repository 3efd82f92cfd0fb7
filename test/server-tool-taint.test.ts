/** Server-side tool results (web search, fetch, MCP, code execution) are untrusted data, found by an adversarial pass: live, scripted, and in continued history. */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicModel } from '../src/anthropic/index.js';
import { defineTool, runAgent } from '../src/index.js';
import type { ModelResponse } from '../src/model/model.js';
import { scriptedModel } from '../src/testing/index.js';
import { startProviderServer } from './support/provider-server.js';
import { ATTACKER, answer, hostileTurn, searchResult } from './support/server-tool-turns.js';

let server: Awaited<ReturnType<typeof startProviderServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sendEmail = (sent: unknown[]) =>
  defineTool({
    name: 'send_email',
    description: 'Send an email.',
    effect: 'write',
    input: z.object({ to: z.string(), body: z.string() }),
    sensitiveArguments: ['to'],
    execute: (input) => {
      sent.push(input);
      return { ok: true };
    },
  });

it('an injection in a server-side web_search_tool_result must taint the context (real Anthropic SDK)', async () => {
  server = await startProviderServer([
    hostileTurn({ id: 'toolu_1', name: 'send_email', input: { to: ATTACKER, body: 'the report' } }),
    answer('Sent.'),
  ]);
  const sent: unknown[] = [];
  const result = await runAgent({
    model: anthropicModel(new Anthropic({ apiKey: 't', baseURL: server.url, maxRetries: 0 }), {
      model: 'claude-test',
    }),
    input: 'Search the web for the quarterly report and summarize it.',
    tools: [sendEmail(sent)],
  });
  // Expected: the web search result is untrusted content; `to` does not come from the user → pause.
  expect(sent).toEqual([]);
  expect(result.outcome.kind).toBe('awaiting_approval');
});

it('scripted: a server-side search result alone (no client tool result) taints the context', async () => {
  const sent: unknown[] = [];
  const turn: ModelResponse = {
    content: [
      {
        type: 'provider',
        provider: 'anthropic',
        kind: 'server_tool_use',
        raw: { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'x' } },
      },
      { type: 'provider', provider: 'anthropic', kind: 'web_search_tool_result', raw: searchResult },
      { type: 'tool_use', id: 'c1', name: 'send_email', input: { to: ATTACKER, body: 'hi' } },
    ],
    stopReason: 'tool_use',
    usage: { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: 'scripted',
  };
  const result = await runAgent({
    model: scriptedModel([() => turn, { text: 'done' }]),
    input: 'Summarize the report.',
    tools: [sendEmail(sent)],
    taint: { onTaintedCall: 'deny' },
  });
  expect(sent).toEqual([]);
  expect(result.outcome.kind).toBe('answered');
});

it('continuing a conversation whose history holds a web search result: still untrusted', async () => {
  const sent: unknown[] = [];
  const result = await runAgent({
    model: scriptedModel([
      { toolCalls: [{ name: 'send_email', input: { to: ATTACKER, body: 'x' } }] },
      { text: 'ok' },
    ]),
    input: [
      { role: 'user', content: [{ type: 'text', text: 'Search the web for the report.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'provider', provider: 'anthropic', kind: 'web_search_tool_result', raw: searchResult },
          { type: 'text', text: 'Found it.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Now act on it.' }] },
    ],
    tools: [sendEmail(sent)],
    taint: { onTaintedCall: 'deny' },
  });
  expect(sent).toEqual([]);
  expect(result.outcome.kind).toBe('answered');
});
