import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorRange, measure, openAINodeRequests } from '../../test/support/token-accuracy.js';
import type { JsonValue, Message } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';
import { formatOpenAIFunctionDefinitions } from './openai-function-definitions.js';
import { openaiTokenEstimator } from './openai-token-estimator.js';

interface ChatTokensCase {
  messages: { role: string; content: string; name?: string; function_call?: unknown }[];
  functions?: { name: string; description?: string; parameters: { [key: string]: JsonValue } }[];
  function_call?: unknown;
  tokens: number;
}

/**
 * openai-chat-tokens' cases: Chat Completions requests with the `prompt_tokens` gpt-3.5-turbo
 * reported for them (cl100k_base). Those a reins request can say: one leading system message,
 * user and assistant text, function tools, the default tool choice.
 */
function expressibleCases() {
  const cases = JSON.parse(
    readFileSync(
      new URL('../../test/fixtures/tokenizers/openai-chat-tokens/cases.json', import.meta.url),
      'utf8',
    ),
  ) as ChatTokensCase[];
  const expressible = cases.filter(
    (entry) =>
      (entry.function_call === undefined || entry.function_call === 'auto') &&
      entry.messages.every(
        (message, index) =>
          message.name === undefined &&
          message.function_call === undefined &&
          (message.role === 'user' ||
            message.role === 'assistant' ||
            (message.role === 'system' && index === 0)),
      ),
  );
  return {
    all: cases.length,
    expressible: expressible.map((entry) => ({
      tokens: entry.tokens,
      request: {
        system: entry.messages[0]?.role === 'system' ? entry.messages[0].content : '',
        tools: (entry.functions ?? []).map(
          (fn): ToolDefinition => ({
            name: fn.name,
            description: fn.description ?? '',
            inputSchema: fn.parameters,
          }),
        ),
        messages: entry.messages
          .filter((message) => message.role !== 'system')
          .map(
            (message) =>
              ({ role: message.role, content: [{ type: 'text', text: message.content }] }) as Message,
          ),
      },
    })),
  };
}

const requestTokens = (estimator: TokenEstimator, request: Parameters<PrefillCounter['request']>[0]) =>
  new PrefillCounter(estimator).request(request);

describe('OpenAI Chat Completions framing, against counts the API reported', () => {
  const { all, expressible } = expressibleCases();
  const cl100k = openaiTokenEstimator({ encoding: 'cl100k_base' });

  it('uses 21 of the 36 openai-chat-tokens cases (the rest need names, function roles or a forced tool)', () => {
    expect(all).toBe(36);
    expect(expressible).toHaveLength(21);
    expect(expressible.filter((entry) => entry.request.tools.length > 0)).toHaveLength(14);
  });

  it('reproduces every one exactly with cl100k_base (gpt-3.5-turbo)', () => {
    const off = expressible
      .map((entry) => ({ ...entry, estimated: requestTokens(cl100k, entry.request) }))
      .filter((entry) => entry.estimated !== entry.tokens)
      .map((entry) => `${entry.estimated} ≠ ${entry.tokens}: ${JSON.stringify(entry.request).slice(0, 120)}`);
    expect(off).toEqual([]);
  });

  it('is a check that can fail: the text without framing, or chars/4, matches at most one by chance', () => {
    const textOnly: TokenEstimator = { name: 'cl100k text only', countText: cl100k.countText };
    const exact = expressible.filter((entry) => requestTokens(textOnly, entry.request) === entry.tokens);
    expect(exact.length).toBeLessThanOrEqual(1);
    const charsOver4 = expressible.filter(
      (entry) => requestTokens(approxTokenEstimator, entry.request) === entry.tokens,
    );
    expect(charsOver4.length).toBeLessThanOrEqual(1);
  });

  it('renders function tools as the namespace the prompt carries', () => {
    const text = formatOpenAIFunctionDefinitions([
      {
        name: 'get_weather',
        description: 'Weather for a city',
        inputSchema: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'The city' },
            units: { type: 'string', enum: ['c', 'f'] },
            days: { type: 'array', items: { type: 'integer' } },
          },
          required: ['city'],
        },
      },
    ]);
    expect(text).toBe(
      [
        'namespace functions {',
        '',
        '// Weather for a city',
        'type get_weather = (_: {',
        '// The city',
        'city: string,',
        'units?: "c" | "f",',
        'days?: number[],',
        '}) => any;',
        '',
        '} // namespace functions',
      ].join('\n'),
    );
  });
});

describe('openaiTokenEstimator on the recorded openai-node requests (gpt-4o-2024-08-06)', () => {
  const requests = openAINodeRequests();
  const o200k = measure(openaiTokenEstimator({ encoding: 'o200k_base' }), requests);
  const schemaCounted = (id: string) => id.includes('transform');

  it('reads the ten recorded requests', () => {
    expect(requests).toHaveLength(10);
    expect(
      requests.every((request) => request.unmodelled.some((what) => what.startsWith('response_format'))),
    ).toBe(true);
  });

  it('undercounts nine by 3–4 tokens: the structured-output overhead it is not shown', () => {
    const errors = o200k.filter((row) => !schemaCounted(row.id)).map((row) => row.error);
    expect(errors).toHaveLength(9);
    expect(Math.min(...errors)).toBe(-4);
    expect(Math.max(...errors)).toBe(-3);
  });

  it('undercounts the 2024-09-13 recording by 149 tokens: its prompt_tokens hold more than its messages (the schema, presumably)', () => {
    expect(o200k.filter((row) => schemaCounted(row.id)).map((row) => row.error)).toEqual([-149]);
  });

  it('the chars/4 default undercounts the same nine by 19–65%', () => {
    const range = errorRange(measure(approxTokenEstimator, requests).filter((row) => !schemaCounted(row.id)));
    expect(range.min).toBeCloseTo(-0.647, 3);
    expect(range.max).toBeCloseTo(-0.194, 3);
  });
});
