import type { LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { ConfigurationError } from '../errors/reins-error.js';
import { callSettings } from '../model/check-settings.js';
import type { Model, ModelRequest, ModelResponse, ModelSettings } from '../model/model.js';
import type { AssembleOptions } from '../stream/assemble-anthropic.js';
import { aiSdkCallOptions, providerKeyOf } from './ai-sdk-call-options.js';
import { type AiSdkStreamPart, assembleAiSdkStream } from './assemble-ai-sdk-stream.js';
import { toV3CallOptions } from './to-v3-call-options.js';

/**
 * A language model of the AI SDK's provider specification: V4 (`ai` 7, `@ai-sdk/*` providers
 * 4.x) or V3 (`ai` 6). Read structurally; `@ai-sdk/provider` is never loaded at run time.
 */
export type AiSdkLanguageModel = LanguageModelV4 | LanguageModelV3;

export interface AiSdkModelOptions extends AssembleOptions {
  /** Provider features for every call; a run's or a step's settings override them field by field. */
  settings?: ModelSettings;
  /** Shown in traces. @default the model's `modelId` */
  name?: string;
}

/**
 * The reins `Model` over any AI SDK provider's language model (`@ai-sdk/anthropic`,
 * `@ai-sdk/openai`, `@ai-sdk/google`, `@ai-sdk/amazon-bedrock`, …): every call goes through
 * `doStream`, tool arguments show as they arrive, and the loop gets strictly parsed input only.
 * Errors thrown by the provider reach the loop as they are (`APICallError` carries `statusCode`,
 * `responseHeaders`, `isRetryable`); an error inside the stream is a `StreamError`. Retry at one
 * layer: the provider's `doStream` does not retry (only `generateText` does), so wrap this model in
 * `retryingModel`. docs/providers.md says which settings map onto which provider.
 *
 * @example
 * import { createAnthropic } from '@ai-sdk/anthropic';
 * const anthropic = createAnthropic();
 * const model = aiSdkModel(anthropic('claude-sonnet-4-5'), { settings: { thinking: { budgetTokens: 4_000 } } });
 */
export function aiSdkModel(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): Model {
  const version = (model as { specificationVersion?: unknown }).specificationVersion;
  if (version !== 'v4' && version !== 'v3')
    throw new ConfigurationError(
      'model',
      `expected an AI SDK LanguageModelV4 or V3 (ai 6 or later), got specificationVersion ${JSON.stringify(version)}`,
    );
  const providerKey = providerKeyOf(model.provider);
  return {
    name: options.name ?? model.modelId,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const call = aiSdkCallOptions(model, request, callSettings(options.settings, request.settings));
      const result =
        model.specificationVersion === 'v4'
          ? await model.doStream(call)
          : await model.doStream(toV3CallOptions(call));
      const response = await assembleAiSdkStream(result.stream as ReadableStream<AiSdkStreamPart>, {
        providerKey,
        ...(options.onText ? { onText: options.onText } : {}),
        ...(options.onToolInput ? { onToolInput: options.onToolInput } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      response.model ??= model.modelId;
      return response;
    },
  };
}
