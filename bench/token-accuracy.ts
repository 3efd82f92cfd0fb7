/**
 * How close each estimator comes to counts someone verified: the tokenizers' own test vectors, the
 * prompt_tokens OpenAI reported for openai-chat-tokens' requests, and the recorded openai-node and
 * Anthropic ToolRunner requests (test/fixtures/tokenizers/README.md). Prints the table in
 * docs/token-counting.md; the tests in src/tokenizers/ assert the same figures.
 *
 *   npm run bench:token-accuracy
 */

import { readFileSync } from 'node:fs';
import type { Message } from '../src/model/content.js';
import { anthropicTokenEstimator } from '../src/tokenizers/anthropic-token-estimator.js';
import { openaiTokenEstimator } from '../src/tokenizers/openai-token-estimator.js';
import { approxTokenEstimator, type TokenEstimator } from '../src/tokens/token-estimator.js';
import { legacyClaudeTokenEstimator } from '../test/support/legacy-claude-estimator.js';
import {
  anthropicToolRunnerRequests,
  type Measurement,
  measure,
  openAINodeRequests,
  type RecordedRequest,
} from '../test/support/token-accuracy.js';

const fixture = (path: string) =>
  readFileSync(new URL(`../test/fixtures/tokenizers/${path}`, import.meta.url), 'utf8');

const estimators: Record<string, TokenEstimator> = {
  'chars/4 (default)': approxTokenEstimator,
  'openai o200k_base': openaiTokenEstimator({ encoding: 'o200k_base' }),
  'openai cl100k_base': openaiTokenEstimator({ encoding: 'cl100k_base' }),
  'anthropic approx (defaults)': anthropicTokenEstimator(),
  'anthropic approx (tool prompt 346)': anthropicTokenEstimator({ toolUseSystemPromptTokens: 346 }),
  'Claude 2 BPE (legacy)': legacyClaudeTokenEstimator,
};

// --------------------------------------------------------------------------------- text vectors

function textVectors(): { set: string; encoding: string; text: string; count: number }[] {
  const plans = fixture('gpt-tokenizer/TestPlans.txt')
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const match = /^EncodingName: (\S+)\nSample: ([\s\S]*)\nEncoded: (\[.*\])\s*$/.exec(block);
      if (!match) throw new Error('unreadable test plan');
      return {
        set: `gpt-tokenizer test plans, ${match[1]}`,
        encoding: match[1] as string,
        text: match[2] as string,
        count: (JSON.parse(match[3] as string) as number[]).length,
      };
    });
  const tiktoken = (
    JSON.parse(fixture('tiktoken/vectors.json')) as {
      vectors: { encoding: string; text: string; tokens?: number[]; count?: number }[];
    }
  ).vectors.map((vector) => ({
    set: `tiktoken's own vectors, ${vector.encoding}`,
    encoding: vector.encoding,
    text: vector.text,
    count: vector.tokens?.length ?? (vector.count as number),
  }));
  const legacy = (
    JSON.parse(fixture('anthropic-tokenizer/vectors.json')) as { vectors: { text: string; count: number }[] }
  ).vectors.map((vector) => ({ set: 'Claude 2 tokenizer vectors', encoding: 'claude-2', ...vector }));
  return [...plans, ...tiktoken, ...legacy];
}

// --------------------------------------------------------------------------- openai-chat-tokens

function chatTokensRequests(): RecordedRequest[] {
  const cases = JSON.parse(fixture('openai-chat-tokens/cases.json')) as {
    messages: { role: string; content: string; name?: string; function_call?: unknown }[];
    functions?: { name: string; description?: string; parameters: Record<string, never> }[];
    function_call?: unknown;
    tokens: number;
  }[];
  return cases
    .filter(
      (entry) =>
        (entry.function_call === undefined || entry.function_call === 'auto') &&
        entry.messages.every(
          (m, i) =>
            m.name === undefined &&
            m.function_call === undefined &&
            (m.role === 'user' || m.role === 'assistant' || (m.role === 'system' && i === 0)),
        ),
    )
    .map((entry, index) => ({
      id: `openai-chat-tokens #${index}`,
      provider: 'openai',
      model: 'gpt-3.5-turbo',
      request: {
        system: entry.messages[0]?.role === 'system' ? entry.messages[0].content : '',
        tools: (entry.functions ?? []).map((fn) => ({
          name: fn.name,
          description: fn.description ?? '',
          inputSchema: fn.parameters,
        })),
        messages: entry.messages
          .filter((m) => m.role !== 'system')
          .map((m) => ({ role: m.role, content: [{ type: 'text', text: m.content }] }) as Message),
      },
      reportedInputTokens: entry.tokens,
      unmodelled: [],
    }));
}

// ------------------------------------------------------------------------------------- printing

const percent = (value: number) => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)}%`;

function summary(rows: readonly Measurement[]): string {
  const exact = rows.filter((row) => row.error === 0).length;
  const errors = rows.map((row) => row.error);
  const relative = rows.map((row) => row.relativeError);
  const tokens = `${Math.min(...errors)}…${Math.max(...errors)} tokens`;
  return `${exact}/${rows.length} exact; ${percent(Math.min(...relative))} to ${percent(Math.max(...relative))} (${tokens})`;
}

console.log('Text test vectors: exact count / n');
const vectors = textVectors();
for (const set of [...new Set(vectors.map((vector) => vector.set))]) {
  const inSet = vectors.filter((vector) => vector.set === set);
  const cells = Object.entries(estimators).map(([name, estimator]) => {
    const exact = inSet.filter((vector) => estimator.countText(vector.text) === vector.count).length;
    return `${name}: ${exact}/${inSet.length}`;
  });
  console.log(`  ${set}\n    ${cells.join('\n    ')}`);
}

const groups: [string, RecordedRequest[]][] = [
  ['openai-chat-tokens, gpt-3.5-turbo prompt_tokens (21 requests)', chatTokensRequests()],
  [
    'openai-node, gpt-4o-2024-08-06, messages + response_format (9 requests)',
    openAINodeRequests().filter((r) => !r.id.includes('transform')),
  ],
  [
    'openai-node, gpt-4o, 2024-09-13 recording with the schema billed (1)',
    openAINodeRequests().filter((r) => r.id.includes('transform')),
  ],
  [
    'ToolRunner, Claude Sonnet 4, one tool (6)',
    anthropicToolRunnerRequests().filter((r) => r.model === 'claude-sonnet-4-20250514'),
  ],
  [
    'ToolRunner, Claude Sonnet 4.5, with tools (2)',
    anthropicToolRunnerRequests().filter(
      (r) => r.model === 'claude-sonnet-4-5' && r.request.tools.length > 0,
    ),
  ],
  [
    'ToolRunner, Claude Sonnet 4.5, no tools (2)',
    anthropicToolRunnerRequests().filter(
      (r) => r.model === 'claude-sonnet-4-5' && r.request.tools.length === 0,
    ),
  ],
];
console.log('\nWhole requests against reported input tokens: estimated − reported');
for (const [title, requests] of groups) {
  console.log(`  ${title}`);
  for (const [name, estimator] of Object.entries(estimators))
    console.log(`    ${name.padEnd(36)} ${summary(measure(estimator, requests))}`);
}
