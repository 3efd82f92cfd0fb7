import type OpenAI from 'openai';
import type { Message } from '../model/content.js';
import type { Model, ModelRequest, ModelResponse } from '../model/model.js';
import type { AssembleOptions } from '../stream/assemble-anthropic.js';
import { assembleOpenAIChatStream, type OpenAIChatChunk } from '../stream/assemble-openai.js';

export interface OpenAIModelOptions extends AssembleOptions {
  /** The model id, for example `gpt-5-mini`. */
  model: string;
}

/** reins messages as Chat Completions messages: tool results become `role: 'tool'` messages. */
export function toOpenAIMessages(
  system: string,
  messages: readonly Message[],
): OpenAI.Chat.ChatCompletionMessageParam[] {
  const out: OpenAI.Chat.ChatCompletionMessageParam[] =
    system === '' ? [] : [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'user') {
      const text = message.content
        .filter((block) => block.type === 'text')
        .map((block) => (block.type === 'text' ? block.text : ''))
        .join('\n');
      for (const block of message.content) {
        if (block.type === 'tool_result')
          out.push({ role: 'tool', tool_call_id: block.toolUseId, content: block.content });
      }
      if (text !== '') out.push({ role: 'user', content: text });
      continue;
    }
    const text = message.content
      .filter((block) => block.type === 'text')
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('\n');
    const calls = message.content.flatMap((block) =>
      block.type === 'tool_use'
        ? [
            {
              id: block.id,
              type: 'function' as const,
              function: { name: block.name, arguments: block.inputText ?? JSON.stringify(block.input ?? {}) },
            },
          ]
        : [],
    );
    out.push({
      role: 'assistant',
      content: text === '' ? null : text,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    });
  }
  return out;
}

/**
 * The reins `Model` over an official `openai` client (Chat Completions, streamed, with usage).
 * Create the client with `maxRetries: 0` and wrap this model in `retryingModel` to retry at one layer.
 *
 * @example
 * const model = openAIModel(new OpenAI({ maxRetries: 0 }), { model: 'gpt-5-mini' });
 */
export function openAIModel(client: OpenAI, options: OpenAIModelOptions): Model {
  return {
    name: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const params: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
        model: options.model,
        messages: toOpenAIMessages(request.system, request.messages),
        stream: true,
        stream_options: { include_usage: true },
      };
      if (request.maxOutputTokens !== undefined) params.max_completion_tokens = request.maxOutputTokens;
      if (request.tools.length > 0) {
        params.tools = request.tools.map((tool) => ({
          type: 'function' as const,
          function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
        }));
        params.tool_choice = request.toolChoice === 'none' ? 'none' : 'auto';
      }
      const stream = await client.chat.completions.create(
        params,
        request.signal ? { signal: request.signal } : {},
      );
      return assembleOpenAIChatStream(stream as unknown as AsyncIterable<OpenAIChatChunk>, options);
    },
  };
}
