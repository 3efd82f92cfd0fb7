/**
 * Recorded requests whose bodies and reported input tokens are both known, as reins requests, and
 * an estimator's error on them. Used by the tokenizer tests (which assert the bounds) and by
 * `bench/token-accuracy.ts` (which prints the table in docs/token-counting.md).
 */
import { readFileSync } from 'node:fs';
import type { AssistantBlock, Message, UserBlock } from '../../src/model/content.js';
import type { ToolDefinition } from '../../src/model/model.js';
import { PrefillCounter, type TokenEstimator } from '../../src/tokens/token-estimator.js';

const fixtures = new URL('../fixtures/', import.meta.url);
const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, fixtures), 'utf8'));

/** A request as reins sizes it, and what the provider reported it cost. */
export interface RecordedRequest {
  id: string;
  provider: 'anthropic' | 'openai';
  model: string;
  request: { system: string; tools: ToolDefinition[]; messages: Message[] };
  reportedInputTokens: number;
  /** What the request sent that reins does not model (so no estimator is shown it). */
  unmodelled: string[];
}

// ----------------------------------------------------------------------------------- Anthropic

type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };
interface AnthropicBody {
  model: string;
  system?: string;
  messages: { role: 'user' | 'assistant'; content: string | AnthropicBlock[] }[];
  tools?: { name: string; description?: string; input_schema: ToolDefinition['inputSchema'] }[];
}

function anthropicBlock(block: AnthropicBlock): AssistantBlock | UserBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'tool_result':
      return {
        type: 'tool_result',
        toolUseId: block.tool_use_id,
        content: block.content,
        isError: block.is_error ?? false,
      };
  }
}

/** An Anthropic Messages request body as the reins request the Anthropic adapter would send. */
export function fromAnthropicBody(body: AnthropicBody): RecordedRequest['request'] {
  return {
    system: body.system ?? '',
    tools: (body.tools ?? []).map((tool) => ({
      name: tool.name,
      description: tool.description ?? '',
      inputSchema: tool.input_schema,
    })),
    messages: body.messages.map(
      (message) =>
        ({
          role: message.role,
          content:
            typeof message.content === 'string'
              ? [{ type: 'text', text: message.content }]
              : message.content.map(anthropicBlock),
        }) as Message,
    ),
  };
}

/**
 * The Anthropic SDK's ToolRunner recordings: ten non-streamed Messages calls (two models) with the
 * request body and the response's `usage.input_tokens`.
 */
export function anthropicToolRunnerRequests(): RecordedRequest[] {
  const entries = readJson('provider-streams/anthropic-sdk/tests/lib/tools/nockFixtures/ToolRunner.json') as {
    body: AnthropicBody & { tool_choice?: unknown };
    response: { usage: { input_tokens: number } };
  }[];
  return entries.map((entry, index) => ({
    id: `ToolRunner.json[${index}]`,
    provider: 'anthropic',
    // Recorded with Claude Sonnet 4; the fixture's model was renamed later without re-recording
    // (anthropic-sdk-typescript 384ab517, "stop using deprecated models").
    model: entry.body.model === 'claude-opus-4-8' ? 'claude-sonnet-4-20250514' : entry.body.model,
    request: fromAnthropicBody(entry.body),
    reportedInputTokens: entry.response.usage.input_tokens,
    unmodelled: entry.body.tool_choice === undefined ? [] : ['tool_choice'],
  }));
}

// -------------------------------------------------------------------------------------- OpenAI

interface OpenAINodeRequest {
  snapshot: string;
  test: string;
  model: string;
  messages: { role: 'system' | 'user'; content: string }[];
  unmodelled: string[];
}

/**
 * The openai-node Chat Completions recordings: the request each test sent (copied from the test
 * source, see test/fixtures/tokenizers/README.md) with the `prompt_tokens` of the recorded response.
 */
export function openAINodeRequests(): RecordedRequest[] {
  const requests = readJson('tokenizers/openai-node/requests.json') as OpenAINodeRequest[];
  return requests.map((entry) => {
    const snapshot = readFileSync(
      new URL(`provider-streams/openai-node/${entry.snapshot}`, fixtures),
      'utf8',
    );
    const at = snapshot.indexOf(`exports[\`${entry.test}\`]`);
    if (at < 0) throw new Error(`no snapshot ${entry.test} in ${entry.snapshot}`);
    const end = snapshot.indexOf('\n`;', at);
    const match = /"prompt_tokens\\?"\s*:\s*(\d+)/.exec(snapshot.slice(at, end));
    if (!match) throw new Error(`no prompt_tokens in ${entry.test}`);
    const system = entry.messages.filter((message) => message.role === 'system');
    return {
      id: `${entry.snapshot}: ${entry.test}`,
      provider: 'openai',
      model: entry.model,
      request: {
        system: system.map((message) => message.content).join('\n'),
        tools: [],
        messages: entry.messages
          .filter((message) => message.role === 'user')
          .map((message) => ({ role: 'user', content: [{ type: 'text', text: message.content }] })),
      },
      reportedInputTokens: Number(match[1]),
      unmodelled: entry.unmodelled,
    };
  });
}

// ----------------------------------------------------------------------------------- measuring

export interface Measurement {
  id: string;
  model: string;
  reported: number;
  estimated: number;
  /** estimated − reported: negative is an undercount (the call may not fit after all). */
  error: number;
  /** error / reported. */
  relativeError: number;
}

export function measure(estimator: TokenEstimator, requests: readonly RecordedRequest[]): Measurement[] {
  return requests.map((recorded) => {
    const estimated = new PrefillCounter(estimator).request(recorded.request);
    const error = estimated - recorded.reportedInputTokens;
    return {
      id: recorded.id,
      model: recorded.model,
      reported: recorded.reportedInputTokens,
      estimated,
      error,
      relativeError: error / recorded.reportedInputTokens,
    };
  });
}

/** The smallest and largest relative error, as fractions. */
export function errorRange(measurements: readonly Measurement[]): { min: number; max: number } {
  const errors = measurements.map((measurement) => measurement.relativeError);
  return { min: Math.min(...errors), max: Math.max(...errors) };
}
