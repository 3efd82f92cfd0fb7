/** What a Responses output item becomes in reins, and the stop reason and usage of a response. */
import type { AssistantBlock, JsonValue } from '../model/content.js';
import type { StopReason, Usage } from '../model/model.js';
import type { OpenAIResponsesItem, OpenAIResponsesResponse } from './assemble-responses.js';
import { createPartialJsonParser } from './parse-partial-json.js';

type Fields = { [key: string]: unknown };

/** What one output item became, and what it says about the stop reason. */
export interface ItemBlocks {
  block: AssistantBlock[];
  toolCall?: boolean;
  cutOff?: boolean;
  refusal?: boolean;
}

export function blockOf(item: OpenAIResponsesItem): ItemBlocks {
  switch (item.type) {
    case 'message':
      return messageBlocks(item);
    case 'function_call':
      return functionCallBlock(item);
    case 'custom_tool_call':
      return customToolCallBlock(item);
    case 'reasoning':
      return { block: [reasoningBlock(item)] };
    default:
      return {
        block: [
          {
            type: 'provider',
            provider: 'openai',
            kind: item.type,
            raw: item as { [key: string]: JsonValue },
          },
        ],
      };
  }
}

function messageBlocks(item: OpenAIResponsesItem): ItemBlocks {
  const block: AssistantBlock[] = [];
  let refusal = false;
  for (const part of (item['content'] as Fields[] | undefined) ?? []) {
    if (part['type'] === 'refusal') {
      refusal = true;
      block.push({ type: 'text', text: String(part['refusal'] ?? '') });
    } else if (typeof part['text'] === 'string') {
      const annotations = part['annotations'];
      block.push(
        Array.isArray(annotations) && annotations.length > 0
          ? { type: 'text', text: part['text'], citations: annotations as JsonValue[] }
          : { type: 'text', text: part['text'] },
      );
    }
  }
  return { block, refusal };
}

function functionCallBlock(item: OpenAIResponsesItem): ItemBlocks {
  const id = String(item['call_id'] ?? item['id'] ?? '');
  const name = String(item['name'] ?? '');
  const raw = typeof item['arguments'] === 'string' ? item['arguments'] : '';
  // A zero-argument call streams no argument text at all.
  if (raw.trim() === '') return { block: [{ type: 'tool_use', id, name, input: {} }], toolCall: true };
  const parser = createPartialJsonParser();
  parser.push(raw);
  const result = parser.finish();
  if (result.status === 'complete')
    return { block: [{ type: 'tool_use', id, name, input: result.value }], toolCall: true };
  return {
    block: [{ type: 'tool_use', id, name, input: undefined, inputText: raw }],
    toolCall: true,
    cutOff: result.status === 'truncated',
  };
}

/**
 * A freeform custom tool's call is a client tool call like any other; its input is text, not JSON,
 * so reins hands the tool `{ input: text }` (the AI SDK hands it the bare string).
 */
function customToolCallBlock(item: OpenAIResponsesItem): ItemBlocks {
  const input = typeof item['input'] === 'string' ? item['input'] : '';
  return {
    block: [
      {
        type: 'tool_use',
        id: String(item['call_id'] ?? item['id'] ?? ''),
        name: String(item['name'] ?? ''),
        input: { input },
      },
    ],
    toolCall: true,
  };
}

function reasoningBlock(item: OpenAIResponsesItem): AssistantBlock {
  const texts = (list: unknown) =>
    Array.isArray(list)
      ? list.flatMap((part: Fields) => (typeof part['text'] === 'string' ? [part['text']] : []))
      : [];
  const summary = texts(item['summary']);
  // Summaries are what OpenAI models show; open-weight models stream the reasoning text itself.
  const thinking = (summary.length > 0 ? summary : texts(item['content'])).join('\n\n');
  return { type: 'thinking', thinking, provider: 'openai', providerData: item as JsonValue };
}

const incompleteReasons: Record<string, StopReason> = {
  max_output_tokens: 'max_tokens',
  content_filter: 'refusal',
};

/**
 * From the final status: `incomplete` says why it stopped early; `completed` is `tool_use` when a
 * client tool was called. A refusal part makes it `refusal`; a call whose JSON stops short in a
 * response that claims to be complete makes it `interrupted` (the loop runs nothing either way).
 */
export function stopReasonOf(final: OpenAIResponsesResponse | undefined, blocks: ItemBlocks[]): StopReason {
  if (!final) return 'interrupted';
  if (final.status === 'incomplete')
    return incompleteReasons[final.incomplete_details?.reason ?? ''] ?? 'other';
  if (blocks.some((block) => block.refusal)) return 'refusal';
  if (blocks.some((block) => block.cutOff)) return 'interrupted';
  return blocks.some((block) => block.toolCall) ? 'tool_use' : 'end_turn';
}

export function usageOf(usage: OpenAIResponsesResponse['usage']): Usage | undefined {
  // No usage reported: the loop estimates rather than billing zero.
  if (!usage) return undefined;
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  const result: Usage = {
    inputTokens: (usage.input_tokens ?? 0) - cached,
    outputTokens: usage.output_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') result.reasoningTokens = reasoning;
  return result;
}
