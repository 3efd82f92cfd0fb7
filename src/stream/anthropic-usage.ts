/** Anthropic usage as billed per model, and the context it leaves: see `usageOf`. */
import type { ModelResponse, Usage } from '../model/model.js';

type Fields = { [key: string]: unknown };

/** Usage as the Messages API reports it; `iterations` appear when the server ran several internal turns. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  iterations?: AnthropicIteration[] | null;
  [key: string]: unknown;
}

interface AnthropicIteration {
  type?: string;
  model?: string;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Later counters replace earlier ones; absent or null ones leave them (the SDK's rule). */
export function mergeUsage(into: AnthropicUsage, more: Partial<AnthropicUsage>) {
  for (const [key, value] of Object.entries(more))
    if (value !== null && value !== undefined) into[key] = value;
}

export const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const count = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;

export const usageFrom = (step: AnthropicIteration | AnthropicUsage): Usage => ({
  inputTokens: count(step.input_tokens),
  outputTokens: count(step.output_tokens),
  cacheReadTokens: count(step.cache_read_input_tokens),
  cacheWriteTokens: count(step.cache_creation_input_tokens),
});

const addInto = (total: Usage, more: Usage) => {
  total.inputTokens += more.inputTokens;
  total.outputTokens += more.outputTokens;
  total.cacheReadTokens += more.cacheReadTokens;
  total.cacheWriteTokens += more.cacheWriteTokens;
};

/** Iterations that are the conversation's own turn (not a compaction or an advisor's aside). */
const conversational = new Set(['message', 'fallback_message']);

type UsageReading = Pick<ModelResponse, 'usage' | 'contextTokens' | 'additionalUsage'>;

/**
 * What the call billed, per model, and what the next prefill holds. Without iterations that is the
 * top-level usage. With them, every iteration is billed (the top-level figures leave compaction and
 * other models' iterations out), at its own model's price, and the context after the call is the
 * last conversational iteration's prefill plus its output, not the sum over iterations.
 */
export function usageOf(
  usage: AnthropicUsage,
  model: string | undefined,
  startPrefill: number,
): UsageReading {
  const reading = billedUsageOf(usage, model, startPrefill);
  // Thinking tokens (a part of output_tokens), for the model that answered.
  const details = usage['output_tokens_details'] as { thinking_tokens?: unknown } | null | undefined;
  const thinking = details?.thinking_tokens;
  if (reading.usage && typeof thinking === 'number' && Number.isSafeInteger(thinking) && thinking >= 0)
    reading.usage.reasoningTokens = Math.min(thinking, reading.usage.outputTokens);
  return reading;
}

function billedUsageOf(usage: AnthropicUsage, model: string | undefined, startPrefill: number): UsageReading {
  // Nothing reported at all: no usage, so the loop bills its estimate rather than zero.
  if (typeof usage.input_tokens !== 'number' && typeof usage.output_tokens !== 'number') return {};
  const iterations = Array.isArray(usage.iterations) ? usage.iterations : [];
  if (iterations.length === 0) return withoutIterations(usage, startPrefill);
  const own: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const others = new Map<string, Usage>();
  for (const step of iterations) {
    const stepModel = typeof step.model === 'string' && step.model !== '' ? step.model : model;
    if (stepModel === model || stepModel === undefined) addInto(own, usageFrom(step));
    else {
      const total = others.get(stepModel) ?? {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      };
      addInto(total, usageFrom(step));
      others.set(stepModel, total);
    }
  }
  const reading: UsageReading = { usage: own };
  if (others.size > 0)
    reading.additionalUsage = [...others].map(([name, total]) => ({ model: name, usage: total }));
  const last = iterations.findLast((step) => conversational.has(String(step.type ?? 'message')));
  if (last) {
    const step = usageFrom(last);
    reading.contextTokens =
      step.inputTokens + step.cacheReadTokens + step.cacheWriteTokens + step.outputTokens;
  }
  return reading;
}

/**
 * Server tools without an `iterations` list: the top-level input is the sum of N+1 prefills for N
 * server requests, each prefill the first (p₀, from `message_start`) plus what came before it. The
 * sum less N·p₀ is exact for one request and above the last prefill for more (a budget errs safe),
 * so that, plus the output, is the context after the call.
 */
function withoutIterations(usage: AnthropicUsage, startPrefill: number): UsageReading {
  const billed = usageFrom(usage);
  const requests = serverRequests(usage['server_tool_use']);
  if (requests === 0 || startPrefill === 0) return { usage: billed };
  const summed = billed.inputTokens + billed.cacheReadTokens + billed.cacheWriteTokens;
  const last = Math.max(startPrefill, summed - requests * startPrefill);
  return { usage: billed, contextTokens: last + billed.outputTokens };
}

const serverRequests = (counts: unknown) =>
  typeof counts === 'object' && counts !== null
    ? Object.values(counts).reduce((total: number, n) => total + count(n), 0)
    : 0;
