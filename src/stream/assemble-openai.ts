import type { AssistantBlock } from '../model/content.js';
import type { ModelResponse, StopReason, Usage } from '../model/model.js';
import type { AssembleOptions } from './assemble-anthropic.js';
import { createPartialJsonParser, type PartialJsonParser } from './parse-partial-json.js';

/** The OpenAI Chat Completions stream chunks reins reads (the SDK's `ChatCompletionChunk`, structurally). */
export interface OpenAIChatChunk {
  id?: string;
  model?: string;
  choices: {
    index?: number;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: {
        index: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  } | null;
}

const finishReasons: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
  function_call: 'tool_use',
};

/**
 * Turns an OpenAI Chat Completions stream into the loop's response: tool-call deltas are gathered
 * by index, shown live through `onToolInput`, and parsed whole only when the stream finished. A
 * stream without a finish reason is `interrupted`; `length` is `max_tokens`; either way a call
 * whose JSON was cut off carries only its raw text, and the loop executes nothing.
 */
export async function assembleOpenAIChatStream(
  chunks: AsyncIterable<OpenAIChatChunk>,
  options: AssembleOptions = {},
): Promise<ModelResponse> {
  let text = '';
  let refusal = '';
  const calls: { id: string; name: string; raw: string; parser: PartialJsonParser }[] = [];
  let finish: string | undefined;
  let id: string | undefined;
  let model: string | undefined;
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

  let received = 0;
  try {
    for await (const chunk of chunks) {
      received++;
      id ??= chunk.id;
      model ??= chunk.model;
      if (chunk.usage) {
        const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
        usage.inputTokens = (chunk.usage.prompt_tokens ?? 0) - cached;
        usage.cacheReadTokens = cached;
        usage.outputTokens = chunk.usage.completion_tokens ?? 0;
      }
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      if (delta.content) {
        text += delta.content;
        options.onText?.(delta.content);
      }
      if (delta.refusal) refusal += delta.refusal;
      for (const part of delta.tool_calls ?? []) {
        let call = calls[part.index];
        if (!call) {
          call = {
            id: part.id ?? `call_${part.index}`,
            name: part.function?.name ?? '',
            raw: '',
            parser: createPartialJsonParser(),
          };
          calls[part.index] = call;
        } else if (part.function?.name) call.name += part.function.name;
        const fragment = part.function?.arguments ?? '';
        if (fragment !== '') {
          call.raw += fragment;
          call.parser.push(fragment);
          options.onToolInput?.({ callId: call.id, name: call.name, display: call.parser.snapshot() });
        }
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  } catch (error) {
    // A connection dropped mid-stream: keep what arrived; the missing finish reason labels it.
    if (received === 0) throw error;
    finish = undefined;
  }

  const content: AssistantBlock[] = [];
  if (text !== '' || refusal !== '') content.push({ type: 'text', text: text || refusal });
  let cutOff = false;
  for (const call of calls) {
    if (!call) continue;
    const result =
      call.raw.trim() === '' ? ({ status: 'complete', value: {} } as const) : call.parser.finish();
    if (result.status === 'complete')
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: result.value });
    else {
      if (result.status === 'truncated') cutOff = true;
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: undefined, inputText: call.raw });
    }
  }
  let stopReason: StopReason = finish === undefined ? 'interrupted' : (finishReasons[finish] ?? 'other');
  if (refusal !== '') stopReason = 'refusal';
  if (cutOff && stopReason !== 'max_tokens') stopReason = 'interrupted';
  const response: ModelResponse = { content, stopReason, usage };
  if (id !== undefined) response.id = id;
  if (model !== undefined) response.model = model;
  return response;
}
