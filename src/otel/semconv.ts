/**
 * The OpenTelemetry GenAI attribute names reins writes. The GenAI conventions are still at
 * Development status and renamed attributes after v1.36.0; as the spec asks of instrumentations,
 * the newest names are emitted only when `OTEL_SEMCONV_STABILITY_OPT_IN` lists
 * `gen_ai_latest_experimental` (or `semconv: 'latest'` is passed).
 */

/**
 * Which GenAI convention names to write. `'v1.36'`: `gen_ai.system`, content as
 * `gen_ai.content.prompt`/`gen_ai.content.completion` span events. `'latest'`: `gen_ai.provider.name`,
 * cache token counts, content as `gen_ai.input.messages`/`gen_ai.output.messages`/
 * `gen_ai.tool.call.arguments`/`gen_ai.tool.call.result` attributes.
 */
export type GenAiSemconv = 'v1.36' | 'latest';

/** The opt-in value the spec defines for the latest experimental GenAI conventions. */
export const latestGenAiOptIn = 'gen_ai_latest_experimental';

/**
 * The semconv version an environment asks for: `'latest'` when `OTEL_SEMCONV_STABILITY_OPT_IN` (a
 * comma-separated list) holds `gen_ai_latest_experimental`, else `'v1.36'`. Reads `process.env` only
 * where it exists, so it runs in a browser too.
 */
export function genAiSemconvFromEnvironment(
  environment: Readonly<Record<string, string | undefined>> | undefined = processEnvironment(),
): GenAiSemconv {
  const optIn = environment?.['OTEL_SEMCONV_STABILITY_OPT_IN'] ?? '';
  return optIn
    .split(',')
    .map((value) => value.trim())
    .includes(latestGenAiOptIn)
    ? 'latest'
    : 'v1.36';
}

function processEnvironment(): Record<string, string | undefined> | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
}

export const genAi = {
  operationName: 'gen_ai.operation.name',
  /** v1.36 and before. */
  system: 'gen_ai.system',
  /** Replaced `gen_ai.system` after v1.36. */
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  tokenType: 'gen_ai.token.type',
  /** v1.36-era content, as span events. */
  prompt: 'gen_ai.prompt',
  completion: 'gen_ai.completion',
  errorType: 'error.type',
} as const;

/** `gen_ai.operation.name` values. */
export const genAiOperation = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/** The metric names of the GenAI client conventions. */
export const genAiMetric = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
} as const;

/** Bucket boundaries the GenAI conventions advise for the two client histograms. */
export const tokenUsageBuckets = [
  1, 4, 16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864,
];
export const operationDurationBucketsSeconds = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
