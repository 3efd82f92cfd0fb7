import type Anthropic from '@anthropic-ai/sdk';
import type { Message } from '../model/content.js';
import type { Model, ModelRequest, ModelResponse } from '../model/model.js';
import {
  type AnthropicStreamEvent,
  type AssembleOptions,
  assembleAnthropicStream,
} from '../stream/assemble-anthropic.js';

export interface AnthropicModelOptions extends AssembleOptions {
  /** The model id, for example `claude-sonnet-4-5`. */
  model: string;
  /** Used when the request sets no `maxOutputTokens` (the API requires one). @default 4096 */
  maxTokens?: number;
}

/** reins messages in the Messages API's shape. */
export function toAnthropicMessages(messages: readonly Message[]): Anthropic.MessageParam[] {
  return messages.map((message): Anthropic.MessageParam => {
    if (message.role === 'user') {
      return {
        role: 'user',
        content: message.content.flatMap((block): Anthropic.ContentBlockParam[] =>
          block.type === 'text'
            ? [{ type: 'text' as const, text: block.text }]
            : block.type === 'tool_result'
              ? [
                  {
                    type: 'tool_result' as const,
                    tool_use_id: block.toolUseId,
                    content: block.content,
                    is_error: block.isError,
                  },
                ]
              : [],
        ),
      };
    }
    return {
      role: 'assistant',
      content: message.content.flatMap((block): Anthropic.ContentBlockParam[] =>
        block.type === 'text'
          ? [{ type: 'text' as const, text: block.text }]
          : block.type === 'tool_use'
            ? // Arguments that never parsed cannot be sent back as an object; the tool result says what was wrong.
              [
                {
                  type: 'tool_use' as const,
                  id: block.id,
                  name: block.name,
                  input: (block.input ?? {}) as Record<string, unknown>,
                },
              ]
            : [],
      ),
    };
  });
}

/**
 * The reins `Model` over an official `@anthropic-ai/sdk` client: streams every call, shows tool
 * arguments as they arrive, and hands the loop strictly parsed input only. SDK errors reach the
 * loop as they are (`status`, `headers`), which `classifyError` reads. Retry at one layer: create
 * the client with `maxRetries: 0` and wrap this model in `retryingModel`.
 *
 * @example
 * const model = anthropicModel(new Anthropic({ maxRetries: 0 }), { model: 'claude-sonnet-4-5' });
 */
export function anthropicModel(client: Anthropic, options: AnthropicModelOptions): Model {
  return {
    name: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const params: Anthropic.MessageCreateParamsStreaming = {
        model: options.model,
        max_tokens: request.maxOutputTokens ?? options.maxTokens ?? 4_096,
        messages: toAnthropicMessages(request.messages),
        stream: true,
      };
      if (request.system !== '') params.system = request.system;
      if (request.tools.length > 0) {
        params.tools = request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
        }));
        params.tool_choice = { type: request.toolChoice === 'none' ? 'none' : 'auto' };
      }
      const stream = await client.messages.create(params, request.signal ? { signal: request.signal } : {});
      return assembleAnthropicStream(stream as AsyncIterable<AnthropicStreamEvent>, options);
    },
  };
}
