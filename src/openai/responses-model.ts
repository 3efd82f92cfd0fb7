import type OpenAI from 'openai';
import { ConfigurationError } from '../errors/reins-error.js';
import { callSettings } from '../model/check-settings.js';
import type { Model, ModelRequest, ModelResponse, ModelSettings, ToolChoice } from '../model/model.js';
import type { AssembleOptions } from '../stream/assemble-anthropic.js';
import {
  assembleOpenAIResponsesStream,
  type OpenAIResponsesStreamEvent,
} from '../stream/assemble-responses.js';
import { toResponsesInput } from './responses-input.js';

export { toResponsesInput } from './responses-input.js';

type Body = OpenAI.Responses.ResponseCreateParamsStreaming;

export interface OpenAIResponsesModelOptions extends AssembleOptions {
  /** The model id, for example `gpt-5-mini`. */
  model: string;
  /** Settings for every call; a request's own `settings` override them field by field. */
  settings?: ModelSettings;
  /**
   * Let OpenAI keep the response (`store`). Off by default: reins re-sends the whole conversation,
   * reasoning items included, so nothing needs keeping server-side.
   * @default false
   */
  store?: boolean;
  /**
   * Ask for `reasoning.encrypted_content`, which a reasoning item needs to go back when `store` is
   * false. Models without reasoning (gpt-4o, gpt-4.1) may reject it: set `false` for them.
   * @default true when `store` is false
   */
  encryptedReasoning?: boolean;
  /**
   * Tools declared as freeform `custom` tools (plain-text input, no JSON schema). Their calls reach
   * the tool as `{ input: text }`, and go back as `custom_tool_call` / `custom_tool_call_output`.
   * @default []
   */
  customTools?: readonly string[];
}

/**
 * The reins `Model` over an official `openai` client and the Responses API, streamed. Reasoning
 * items come back as thinking blocks and are re-sent verbatim (with encrypted content, since
 * `store` is off); server-side items (web search, MCP, code interpreter …) are kept as provider
 * blocks and re-sent unchanged. Create the client with `maxRetries: 0` and wrap this model in
 * `retryingModel` to retry at one layer.
 *
 * @example
 * const model = openAIResponsesModel(new OpenAI({ maxRetries: 0 }), {
 *   model: 'gpt-5-mini',
 *   settings: { thinking: { effort: 'low' } },
 * });
 */
export function openAIResponsesModel(client: OpenAI, options: OpenAIResponsesModelOptions): Model {
  return {
    name: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const body = toResponsesRequest(request, options);
      const stream = await client.responses.create(body, request.signal ? { signal: request.signal } : {});
      // The assembler turns what the SDK throws mid-stream (an `error` event, a garbled frame) into
      // StreamErrors.
      return assembleOpenAIResponsesStream(stream as AsyncIterable<OpenAIResponsesStreamEvent>, options);
    },
  };
}

/** The Responses request body for one reins call. Throws `ConfigurationError` for unmapped settings. */
export function toResponsesRequest(request: ModelRequest, options: OpenAIResponsesModelOptions): Body {
  const customTools = new Set(options.customTools ?? []);
  const store = options.store ?? false;
  const body: Body = {
    model: options.model,
    input: toResponsesInput(request.messages, customTools),
    store,
    stream: true,
  };
  if (request.system !== '') body.instructions = request.system;
  if (options.encryptedReasoning ?? !store) body.include = ['reasoning.encrypted_content'];
  if (request.tools.length > 0) {
    body.tools = request.tools.map(
      (tool): OpenAI.Responses.Tool =>
        customTools.has(tool.name)
          ? { type: 'custom', name: tool.name, description: tool.description }
          : {
              type: 'function',
              name: tool.name,
              description: tool.description,
              parameters: tool.inputSchema,
              strict: false,
            },
    );
    body.tool_choice = toolChoiceOf(request.toolChoice, customTools);
  }
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  const settings = callSettings(options.settings, request.settings);
  applySettings(body, settings);
  return { ...body, ...settings.providerOptions?.['openai'] } as Body;
}

function toolChoiceOf(
  choice: ToolChoice,
  customTools: ReadonlySet<string>,
): NonNullable<Body['tool_choice']> {
  if (typeof choice === 'string') return choice;
  return { type: customTools.has(choice.name) ? 'custom' : 'function', name: choice.name };
}

function applySettings(body: Body, settings: ModelSettings): void {
  const { thinking, cache } = settings;
  if (thinking && thinking.budgetTokens !== undefined)
    throw new ConfigurationError(
      'settings.thinking.budgetTokens',
      'the OpenAI Responses API has no thinking budget; set settings.thinking.effort instead',
    );
  if (thinking && thinking.effort !== undefined)
    body.reasoning = { effort: thinking.effort, summary: 'auto' };
  if (settings.stopSequences && settings.stopSequences.length > 0)
    throw new ConfigurationError('settings.stopSequences', 'the OpenAI Responses API has no stop parameter');
  if (cache && cache.ttl === '1h')
    throw new ConfigurationError(
      'settings.cache.ttl',
      "OpenAI has no one-hour cache; pass providerOptions.openai.prompt_cache_retention ('24h') instead",
    );
  if (cache && cache.key !== undefined) body.prompt_cache_key = cache.key;
  if (settings.parallelToolCalls !== undefined) body.parallel_tool_calls = settings.parallelToolCalls;
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  if (settings.topP !== undefined) body.top_p = settings.topP;
}
