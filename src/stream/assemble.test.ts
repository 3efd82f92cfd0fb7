import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import type { Model } from '../model/model.js';
import { classifyError } from '../resilience/classify-error.js';
import { defineTool } from '../tools/define-tool.js';
import {
  type AnthropicStreamEvent,
  assembleAnthropicStream,
  type ToolInputProgress,
} from './assemble-anthropic.js';
import { assembleOpenAIChatStream, type OpenAIChatChunk } from './assemble-openai.js';

async function* from<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

const toolJson = JSON.stringify({
  to: 'ana@example.com',
  subject: 'Q3 "numbers"',
  body: 'Revenue grew 12% — caf\u00e9 😀',
});
// Split at awkward places: inside a key, inside an escape, between a surrogate pair.
const awkward = [
  toolJson.slice(0, 3),
  toolJson.slice(3, 27),
  toolJson.slice(27, 40),
  toolJson.slice(40, toolJson.length - 4),
  toolJson.slice(toolJson.length - 4),
];

function anthropicEvents(
  jsonParts: string[],
  ending: 'complete' | 'max_tokens' | 'dropped',
): AnthropicStreamEvent[] {
  const events: AnthropicStreamEvent[] = [
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        model: 'claude-test',
        usage: {
          input_tokens: 120,
          output_tokens: 1,
          cache_read_input_tokens: 80,
          cache_creation_input_tokens: 0,
        },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Sending it now.' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'send_email', input: {} },
    },
    ...jsonParts.map((partial_json) => ({
      type: 'content_block_delta' as const,
      index: 1,
      delta: { type: 'input_json_delta' as const, partial_json },
    })),
  ];
  if (ending === 'dropped') return events;
  if (ending === 'complete') events.push({ type: 'content_block_stop', index: 1 });
  events.push({
    type: 'message_delta',
    delta: { stop_reason: ending === 'complete' ? 'tool_use' : 'max_tokens' },
    usage: { output_tokens: 57 },
  });
  events.push({ type: 'message_stop' });
  return events;
}

describe('Anthropic stream assembly', () => {
  it('shows the argument filling in, and gives the call its input only once the block closed', async () => {
    const progress: ToolInputProgress[] = [];
    const response = await assembleAnthropicStream(from(anthropicEvents(awkward, 'complete')), {
      onToolInput: (p) => progress.push(structuredClone(p)),
    });
    expect(response).toMatchObject({
      id: 'msg_1',
      model: 'claude-test',
      stopReason: 'tool_use',
      usage: { inputTokens: 120, outputTokens: 57, cacheReadTokens: 80, cacheWriteTokens: 0 },
      content: [
        { type: 'text', text: 'Sending it now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'send_email', input: JSON.parse(toolJson) },
      ],
    });
    expect(progress.length).toBe(awkward.length);
    // A key shows only once closed; a string value grows as a prefix of the final one.
    expect(progress[1]!.display).toEqual({ to: 'ana@example.com' });
    const subject = (progress[2]!.display as unknown as { subject: string }).subject;
    expect(subject.length).toBeGreaterThan(0);
    expect('Q3 "numbers"'.startsWith(subject)).toBe(true);
  });

  it('a tool block cut off by max_tokens or a dropped stream carries only raw text', async () => {
    for (const ending of ['max_tokens', 'dropped'] as const) {
      const response = await assembleAnthropicStream(from(anthropicEvents(awkward.slice(0, 3), ending)));
      expect(response.stopReason).toBe(ending === 'max_tokens' ? 'max_tokens' : 'interrupted');
      expect(response.content[1]).toEqual({
        type: 'tool_use',
        id: 'toolu_1',
        name: 'send_email',
        input: undefined,
        inputText: awkward.slice(0, 3).join(''),
      });
    }
  });

  it('an error event becomes an error the resilience layer classifies (overloaded → throttled)', async () => {
    const events: AnthropicStreamEvent[] = [
      { type: 'message_start', message: {} },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ];
    const error = await assembleAnthropicStream(from(events)).catch((thrown: unknown) => thrown);
    expect(classifyError(error)).toMatchObject({ kind: 'throttled', status: 529 });
  });
});

describe('OpenAI Chat Completions stream assembly', () => {
  it('gathers parallel tool calls by index, with cached tokens split out of the prompt', async () => {
    const chunks: OpenAIChatChunk[] = [
      {
        id: 'c1',
        model: 'gpt-test',
        choices: [
          {
            delta: {
              tool_calls: [{ index: 0, id: 'call_a', function: { name: 'lookup', arguments: '{"ke' } }],
            },
          },
        ],
      },
      {
        choices: [
          {
            delta: {
              tool_calls: [{ index: 1, id: 'call_b', function: { name: 'lookup', arguments: '{"key": ' } }],
            },
          },
        ],
      },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'y": "a"}' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: '"b"}' } }] } }] },
      { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
      {
        choices: [],
        usage: { prompt_tokens: 300, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 200 } },
      },
    ];
    const response = await assembleOpenAIChatStream(from(chunks));
    expect(response).toEqual({
      id: 'c1',
      model: 'gpt-test',
      stopReason: 'tool_use',
      usage: { inputTokens: 100, cacheReadTokens: 200, cacheWriteTokens: 0, outputTokens: 40 },
      content: [
        { type: 'tool_use', id: 'call_a', name: 'lookup', input: { key: 'a' } },
        { type: 'tool_use', id: 'call_b', name: 'lookup', input: { key: 'b' } },
      ],
    });
  });

  it('malformed arguments go to the model as labeled errors; cut-off ones end the turn', async () => {
    const malformed = await assembleOpenAIChatStream(
      from([
        {
          choices: [
            {
              delta: {
                tool_calls: [{ index: 0, id: 'x', function: { name: 'lookup', arguments: '{"key": tru}' } }],
              },
              finish_reason: 'tool_calls',
            },
          ],
        },
      ]),
    );
    expect(malformed.stopReason).toBe('tool_use');
    expect(malformed.content[0]).toMatchObject({ input: undefined, inputText: '{"key": tru}' });
    const cut = await assembleOpenAIChatStream(
      from([
        {
          choices: [
            {
              delta: {
                tool_calls: [{ index: 0, id: 'x', function: { name: 'lookup', arguments: '{"key": "a' } }],
              },
            },
          ],
        },
      ]),
    );
    expect(cut.stopReason).toBe('interrupted');
  });
});

describe('through the loop', () => {
  it('a cut-off streamed tool call ends the run truncated and the tool never runs', async () => {
    const sent: unknown[] = [];
    const sendEmail = defineTool({
      name: 'send_email',
      description: 'x',
      effect: 'read',
      input: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
      execute: (input) => sent.push(input),
    });
    const model: Model = {
      name: 'streamed',
      generate: () => assembleAnthropicStream(from(anthropicEvents(awkward.slice(0, 4), 'dropped'))),
    };
    const result = await runAgent({ model, input: 'email ana', tools: [sendEmail] });
    expect(result.outcome).toMatchObject({
      kind: 'truncated',
      block: 'tool_use',
      unexecutedCalls: [{ tool: 'send_email' }],
    });
    expect(sent).toEqual([]);
  });

  it('a whole streamed tool call runs with the strictly parsed input', async () => {
    const sent: unknown[] = [];
    const sendEmail = defineTool({
      name: 'send_email',
      description: 'x',
      effect: 'read',
      input: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
      execute: (input) => sent.push(input),
    });
    let turn = 0;
    const model: Model = {
      name: 'streamed',
      generate: async () =>
        turn++ === 0
          ? assembleAnthropicStream(from(anthropicEvents(awkward, 'complete')))
          : {
              content: [{ type: 'text', text: 'Sent.' }],
              stopReason: 'end_turn',
              usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
            },
    };
    const result = await runAgent({ model, input: 'email ana', tools: [sendEmail] });
    expect(result.outcome.kind).toBe('answered');
    expect(sent).toEqual([JSON.parse(toolJson)]);
  });
});
