import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import { isSilentFailure } from '../stats/silent-failure.js';
import { TraceStatsCollector } from '../stats/trace-stats.js';
import type { ModelErrorEvent, ModelResponseEvent, RunEndEvent, ToolResultEvent } from '../trace/events.js';
import {
  genAi,
  genAiMetric,
  genAiOperation,
  operationDurationBucketsSeconds,
  tokenUsageBuckets,
} from './semconv.js';

interface ChatAttributes {
  call: Attributes;
  input: Attributes;
  output: Attributes;
}

/**
 * The metrics a run records: the GenAI client histograms, and reins's own. Counters carry the
 * dimensions a dashboard groups by; the ratios (`reins.runs.silent_failure_ratio` …) are observable
 * gauges read from a {@link TraceStatsCollector} over the runs this process saw.
 */
export class OtelRunMetrics {
  readonly #tokenUsage: Histogram;
  readonly #operationDuration: Histogram;
  readonly #runs: Counter;
  readonly #runCost: Histogram;
  readonly #runSteps: Histogram;
  readonly #toolCalls: Counter;
  readonly #collector = new TraceStatsCollector();
  readonly #providerKey: string;
  readonly #chat = new Map<string, ChatAttributes>();
  #lastChat:
    | {
        provider: string;
        requestModel: string;
        responseModel: string | undefined;
        attributes: ChatAttributes;
      }
    | undefined;
  /** `reins.tool.calls` attributes by tool, status and error, made once: a step records one. */
  readonly #tool = new Map<string, Attributes>();

  constructor(meter: Meter, providerKey: string) {
    this.#providerKey = providerKey;
    this.#tokenUsage = meter.createHistogram(genAiMetric.tokenUsage, {
      description: 'Tokens used by GenAI calls, by gen_ai.token.type (input, output).',
      unit: '{token}',
      advice: { explicitBucketBoundaries: tokenUsageBuckets },
    });
    this.#operationDuration = meter.createHistogram(genAiMetric.operationDuration, {
      description: 'Duration of GenAI operations (each model call).',
      unit: 's',
      advice: { explicitBucketBoundaries: operationDurationBucketsSeconds },
    });
    this.#runs = meter.createCounter('reins.runs', {
      description: 'Runs ended, by reins.outcome.kind and reins.outcome.silent_failure.',
      unit: '{run}',
    });
    this.#runCost = meter.createHistogram('reins.run.cost', {
      description: 'Spend of each run, by reins.outcome.kind.',
      unit: 'USD',
    });
    this.#runSteps = meter.createHistogram('reins.run.steps', {
      description: 'Model calls each run made, by reins.outcome.kind.',
      unit: '{step}',
    });
    this.#toolCalls = meter.createCounter('reins.tool.calls', {
      description:
        'Tool calls settled, by gen_ai.tool.name and reins.tool.status (error.type when an error).',
      unit: '{call}',
    });
    const gauge = (name: string, description: string, unit: string, read: () => number | null) =>
      meter.createObservableGauge(name, { description, unit }).addCallback((result) => {
        const value = read();
        if (value !== null) result.observe(value);
      });
    gauge(
      'reins.runs.silent_failure_ratio',
      'Of the runs ended in this process, those that ended without an exception and did not succeed (step_limit, over_budget, looped, gave_up, truncated, refused).',
      '1',
      () => this.#collector.result().silentFailureRatio,
    );
    gauge(
      'reins.runs.step_limit_rate',
      'Of the runs ended in this process, those that hit the step limit.',
      '1',
      () => this.#collector.result().stepLimitRate,
    );
    gauge(
      'reins.runs.cost_per_success',
      'Spend of every run this process ended, per run that answered.',
      'USD',
      () => this.#collector.result().costPerSuccessUsd,
    );
  }

  // Only `run-end` feeds the collector: the gauges read nothing the other events add, and a
  // collector fold per model call and tool call was CPU on the loop's path for figures no one reads.
  modelResponse(event: ModelResponseEvent, provider: string, requestModel: string): void {
    const attributes = this.#chatAttributes(provider, requestModel, event.response.model);
    this.#operationDuration.record(event.durationMs / 1_000, attributes.call);
    const usage = event.response.usage;
    if (!usage) return;
    this.#tokenUsage.record(
      usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
      attributes.input,
    );
    this.#tokenUsage.record(usage.outputTokens, attributes.output);
  }

  /** One set of attribute objects per (provider, model) pair, made once: a step records three. */
  #chatAttributes(provider: string, requestModel: string, responseModel: string | undefined): ChatAttributes {
    // Consecutive calls nearly always go to the same model: compare, and skip building the key.
    const last = this.#lastChat;
    if (
      last !== undefined &&
      last.provider === provider &&
      last.requestModel === requestModel &&
      last.responseModel === responseModel
    )
      return last.attributes;
    const key = `${provider}\u0000${requestModel}\u0000${responseModel ?? ''}`;
    let cached = this.#chat.get(key);
    if (!cached) {
      const call: Attributes = {
        [genAi.operationName]: genAiOperation.chat,
        [this.#providerKey]: provider,
        [genAi.requestModel]: requestModel,
      };
      if (responseModel !== undefined) call[genAi.responseModel] = responseModel;
      cached = {
        call,
        input: { ...call, [genAi.tokenType]: 'input' },
        output: { ...call, [genAi.tokenType]: 'output' },
      };
      // Bounded by the models a process calls; a runaway set of ids is cut off rather than kept.
      if (this.#chat.size < 1_000) this.#chat.set(key, cached);
    }
    this.#lastChat = { provider, requestModel, responseModel, attributes: cached };
    return cached;
  }

  modelError(event: ModelErrorEvent, provider: string, requestModel: string): void {
    this.#operationDuration.record(event.durationMs / 1_000, {
      [genAi.operationName]: genAiOperation.chat,
      [this.#providerKey]: provider,
      [genAi.requestModel]: requestModel,
      [genAi.errorType]: event.error.name,
    });
  }

  toolResult(event: ToolResultEvent): void {
    const key = `${event.isError ? 'e' : 'o'}${event.status}\u0000${event.tool}`;
    let attributes = this.#tool.get(key);
    if (!attributes) {
      attributes = { [genAi.toolName]: event.tool, 'reins.tool.status': event.status };
      if (event.isError) attributes[genAi.errorType] = event.status;
      // Bounded by the tools a process has; a runaway set of names is cut off rather than kept.
      if (this.#tool.size < 1_000) this.#tool.set(key, attributes);
    }
    this.#toolCalls.add(1, attributes);
  }

  runEnd(event: RunEndEvent): void {
    this.#collector.add(event);
    const kind = event.outcome.kind;
    const attributes: Attributes = { 'reins.outcome.kind': kind };
    this.#runs.add(1, { ...attributes, 'reins.outcome.silent_failure': isSilentFailure(kind) });
    this.#runCost.record(event.costUsd, attributes);
    this.#runSteps.record(event.steps, attributes);
  }
}
