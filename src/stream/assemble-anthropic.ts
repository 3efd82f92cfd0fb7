import type { AssistantBlock } from '../model/content.js';
import type { ModelResponse, StopReason, Usage } from '../model/model.js';

export { StreamError } from './stream-error.js';

import { createPartialJsonParser, type PartialJsonParser } from './parse-partial-json.js';
import { StreamError } from './stream-error.js';

/** The Anthropic Messages stream events reins reads (the SDK's `MessageStreamEvent`, structurally). */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: { id?: string; model?: string; usage?: AnthropicUsage } }
  | {
      type: 'content_block_start';
      index: number;
      content_block:
        | { type: 'text'; text?: string }
        | { type: 'tool_use'; id: string; name: string; input?: unknown }
        | { type: string };
    }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'input_json_delta'; partial_json: string }
        | { type: string };
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason?: string | null }; usage?: Partial<AnthropicUsage> }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** A tool call's argument as it fills in, for display. */
export interface ToolInputProgress {
  callId: string;
  name: string;
  /** The display value so far (never executable). */
  display: ReturnType<PartialJsonParser['snapshot']>;
}

export interface AssembleOptions {
  onText?: (delta: string) => void;
  onToolInput?: (progress: ToolInputProgress) => void;
}

const stopReasons: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
  pause_turn: 'pause_turn',
  model_context_window_exceeded: 'context_window_exceeded',
};

/**
 * Turns an Anthropic Messages stream into the loop's response. Tool arguments fill in live through
 * `onToolInput`; a tool call is given its input only after its block closed and its JSON parsed
 * whole. A stream that ends early, or a tool block cut off, comes back with stop reason
 * `interrupted` / `max_tokens` and the call's raw text only: the loop labels it `truncated` and
 * executes nothing.
 */
export async function assembleAnthropicStream(
  events: AsyncIterable<AnthropicStreamEvent>,
  options: AssembleOptions = {},
): Promise<ModelResponse> {
  const blocks: {
    block: AssistantBlock;
    parser?: PartialJsonParser;
    raw: string;
    closed: boolean;
    sawJson: boolean;
    cut?: boolean;
  }[] = [];
  let id: string | undefined;
  let model: string | undefined;
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let stopReason: StopReason | undefined;
  let stopped = false;

  let received = 0;
  try {
    for await (const event of events) {
      received++;
      switch (event.type) {
        case 'message_start':
          id = event.message.id;
          model = event.message.model;
          usage.inputTokens = event.message.usage?.input_tokens ?? 0;
          usage.outputTokens = event.message.usage?.output_tokens ?? 0;
          usage.cacheReadTokens = event.message.usage?.cache_read_input_tokens ?? 0;
          usage.cacheWriteTokens = event.message.usage?.cache_creation_input_tokens ?? 0;
          break;
        case 'content_block_start': {
          const start = event.content_block as {
            type: string;
            text?: string;
            id?: string;
            name?: string;
            input?: unknown;
          };
          if (start.type === 'tool_use') {
            blocks[event.index] = {
              block: {
                type: 'tool_use',
                id: start.id as string,
                name: start.name as string,
                input: undefined,
              },
              parser: createPartialJsonParser(),
              raw: '',
              closed: false,
              sawJson: false,
            };
          } else if (start.type === 'text') {
            blocks[event.index] = {
              block: { type: 'text', text: start.text ?? '' },
              raw: '',
              closed: false,
              sawJson: false,
            };
          }
          break;
        }
        case 'content_block_delta': {
          const entry = blocks[event.index];
          if (!entry) break;
          const delta = event.delta as { type: string; text?: string; partial_json?: string };
          if (delta.type === 'text_delta' && entry.block.type === 'text') {
            entry.block.text += delta.text ?? '';
            options.onText?.(delta.text ?? '');
          } else if (delta.type === 'input_json_delta' && entry.block.type === 'tool_use' && entry.parser) {
            entry.raw += delta.partial_json ?? '';
            entry.sawJson = true;
            entry.parser.push(delta.partial_json ?? '');
            options.onToolInput?.({
              callId: entry.block.id,
              name: entry.block.name,
              display: entry.parser.snapshot(),
            });
          }
          break;
        }
        case 'content_block_stop': {
          const entry = blocks[event.index];
          if (!entry) break;
          entry.closed = true;
          if (entry.block.type === 'tool_use' && entry.parser) {
            // A tool with no arguments streams no JSON at all.
            if (!entry.sawJson) entry.block.input = {};
            else {
              const result = entry.parser.finish();
              if (result.status === 'complete') entry.block.input = result.value;
              else {
                // Malformed JSON goes to the model as a labeled error; cut-off JSON ends the turn.
                entry.block.inputText = entry.raw;
                entry.cut = result.status === 'truncated';
              }
            }
          }
          break;
        }
        case 'message_delta':
          if (event.delta.stop_reason) stopReason = stopReasons[event.delta.stop_reason] ?? 'other';
          if (event.usage?.output_tokens !== undefined) usage.outputTokens = event.usage.output_tokens;
          if (event.usage?.input_tokens !== undefined && event.usage.input_tokens !== null)
            usage.inputTokens = event.usage.input_tokens;
          break;
        case 'message_stop':
          stopped = true;
          break;
        case 'error':
          throw new StreamError(event.error.type, event.error.message);
        default:
          break;
      }
    }
  } catch (error) {
    // A connection dropped mid-stream: what arrived is kept and labeled, nothing runs. An error
    // the provider sent, or a failure before anything arrived, is the caller's to retry.
    if (error instanceof StreamError || received === 0) throw error;
    stopped = false;
  }

  const content: AssistantBlock[] = [];
  let cutOff = false;
  for (const entry of blocks) {
    if (!entry) continue;
    if (entry.block.type === 'tool_use' && (!entry.closed || entry.cut)) {
      cutOff = true;
      entry.block.input = undefined;
      entry.block.inputText = entry.raw;
    }
    content.push(entry.block);
  }
  const reason: StopReason = !stopped
    ? 'interrupted'
    : cutOff && stopReason !== 'max_tokens'
      ? 'interrupted'
      : (stopReason ?? 'other');
  const response: ModelResponse = { content, stopReason: reason, usage };
  if (id !== undefined) response.id = id;
  if (model !== undefined) response.model = model;
  return response;
}
