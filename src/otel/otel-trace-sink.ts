import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  createNoopMeter,
  isSpanContextValid,
  type Meter,
  metrics,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { ConfigurationError } from '../errors/reins-error.js';
import type { ToolExecutionInfo, ToolExecutionWrapper } from '../loop/options.js';
import type { ModelResponse } from '../model/model.js';
import type {
  ModelErrorEvent,
  ModelResponseEvent,
  RunEndEvent,
  RunStartEvent,
  ToolResultEvent,
  TraceEvent,
} from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { type ControlEventLevel, controlEvent, decisive } from './control-events.js';
import { OtelRunMetrics } from './otel-run-metrics.js';
import { outcomeStatus } from './outcome-status.js';
import { type GenAiSemconv, genAi, genAiOperation, genAiSemconvFromEnvironment } from './semconv.js';

/** Options for {@link otelTraceSink}. */
export interface OtelTraceSinkOptions {
  /** Where spans go. @default trace.getTracer('reins') (the global provider; a no-op until one is registered) */
  tracer?: Tracer;
  /** Where metrics go; `false` records none. @default metrics.getMeter('reins') */
  meter?: Meter | false;
  /**
   * Record prompts, responses, tool arguments and results (and repeat keys, which quote arguments).
   * They hold whatever users and tools wrote, so this is off unless you opt in; each value is cut to
   * `maxChars` characters. @default false
   */
  captureContent?: false | { maxChars: number };
  /** Which GenAI attribute names to write. @default from OTEL_SEMCONV_STABILITY_OPT_IN ('v1.36' unless it lists gen_ai_latest_experimental) */
  semconv?: GenAiSemconv;
  /**
   * Which control decisions become span events on the agent span: `'decisive'` (the checks that
   * stopped or changed something, and every approval and outcome) or `'all'` (passing checks too).
   * @default 'decisive'
   */
  controlEvents?: ControlEventLevel;
  /** `gen_ai.agent.name`, in the agent span's name. @default 'reins' */
  agentName?: string;
  /** `gen_ai.provider.name` (`gen_ai.system` under v1.36). @default inferred from the model id (claude → anthropic, gpt/o1/o3 → openai, gemini → gcp.gemini), else '_OTHER' */
  providerName?: string;
}

/** A reins trace sink that writes OpenTelemetry spans and metrics; see {@link otelTraceSink}. */
export interface OtelTraceSink extends TraceSink {
  /**
   * Pass as `RunOptions.wrapToolExecution`: the call's `execute_tool` span is then active while the
   * tool runs, so spans the tool starts (an HTTP client's, a database's) are its children.
   */
  readonly wrapToolExecution: ToolExecutionWrapper;
}

/** What the sink holds for a run in flight. */
interface OpenRun {
  agent: Span;
  context: Context;
  /**
   * The agent span neither records nor carries a valid context: no SDK is registered (or tracing is
   * suppressed), so every child span would be a no-op too and the sink skips making them.
   */
  inert: boolean;
  /**
   * An inert run whose context no one can read (no context manager registered): the tool wrapper
   * then calls the tool directly instead of through `context.with`.
   */
  direct: boolean;
  requestModel: string;
  provider: string;
  maxOutputTokens: number | null;
  /** `execute_tool` spans started by the wrapper, ended by their `tool-result`. */
  tools: Map<string, Span>;
  /** Tool inputs by call id, kept only when content is captured. */
  inputs: Map<string, unknown> | undefined;
  /** The model a `step-prepare` picked for one step. */
  stepModel: { step: number; model: string } | undefined;
  /**
   * The `chat` span's name and attributes for the run's own model, made at the run's first call and
   * reused (the SDK copies attributes into each span).
   */
  chat: { name: string; attributes: Attributes } | undefined;
}

/**
 * Maps a run's trace events to OpenTelemetry GenAI spans and metrics through `@opentelemetry/api`:
 * one `invoke_agent` span per run (per segment, when resumed), under whatever span is active when
 * the run starts; a `chat` span per model call and an `execute_tool` span per tool call under it.
 * The controls' decisions are span events on the agent span (`reins.budget_check`,
 * `reins.repeat_check`, `reins.authorization`, `reins.taint_verdict`, `reins.approval`,
 * `reins.outcome`…). Span times are the events' times (the run's clock), so a fake clock gives exact
 * spans. A run that ends in anything but `answered` (or a pause) gets an error status with
 * `error.type` set to the outcome kind: a silent failure is still a failure.
 *
 * @example
 * ```ts
 * import { runAgent } from 'reins';
 * import { otelTraceSink } from 'reins/otel';
 * import { scriptedModel } from 'reins/testing';
 *
 * const telemetry = otelTraceSink({ captureContent: { maxChars: 2_000 } });
 * await runAgent({
 *   model: scriptedModel([{ text: 'done' }]),
 *   input: 'Why is checkout slow?',
 *   trace: telemetry,
 *   wrapToolExecution: telemetry.wrapToolExecution,
 * });
 * ```
 */
export function otelTraceSink(options: OtelTraceSinkOptions = {}): OtelTraceSink {
  return new GenAiTraceSink(options);
}

class GenAiTraceSink implements OtelTraceSink {
  readonly #tracer: Tracer;
  readonly #metrics: OtelRunMetrics | undefined;
  readonly #semconv: GenAiSemconv;
  readonly #providerKey: string;
  readonly #maxChars: number | undefined;
  readonly #agentName: string;
  readonly #controlEvents: ControlEventLevel;
  readonly #providerName: string | undefined;
  readonly #runs = new Map<string, OpenRun>();
  /** `execute_tool <name>` span names by tool, made once (bounded like the metrics' attribute sets). */
  readonly #toolSpanNames = new Map<string, string>();

  constructor(options: OtelTraceSinkOptions) {
    this.#tracer = options.tracer ?? trace.getTracer('reins');
    this.#semconv = options.semconv ?? genAiSemconvFromEnvironment();
    if (this.#semconv !== 'v1.36' && this.#semconv !== 'latest')
      throw new ConfigurationError('semconv', `must be 'v1.36' or 'latest', got ${String(this.#semconv)}`);
    this.#providerKey = this.#semconv === 'latest' ? genAi.providerName : genAi.system;
    const meter = options.meter ?? metrics.getMeter('reins');
    // The API's no-op meter (no MeterProvider registered when the sink was made) stays a no-op: the
    // metrics API has no proxy that a later registration would wake. Recording into it is work per
    // step for nothing.
    this.#metrics =
      meter === false || isNoopMeter(meter) ? undefined : new OtelRunMetrics(meter, this.#providerKey);
    const capture = options.captureContent ?? false;
    if (capture !== false && !(Number.isInteger(capture.maxChars) && capture.maxChars > 0))
      throw new ConfigurationError('captureContent.maxChars', 'must be a positive integer');
    this.#maxChars = capture === false ? undefined : capture.maxChars;
    this.#agentName = options.agentName ?? 'reins';
    this.#controlEvents = options.controlEvents ?? 'decisive';
    if (this.#controlEvents !== 'decisive' && this.#controlEvents !== 'all')
      throw new ConfigurationError('controlEvents', `must be 'decisive' or 'all'`);
    this.#providerName = options.providerName;
  }

  write(event: TraceEvent): void {
    switch (event.type) {
      case 'run-start':
        this.#runStart(event);
        return;
      case 'step-prepare': {
        const run = this.#runs.get(event.runId);
        if (run && event.changes.model !== undefined)
          run.stepModel = { step: event.step, model: event.changes.model };
        return;
      }
      case 'model-response':
        this.#modelResponse(event);
        return;
      case 'model-error':
        this.#modelError(event);
        return;
      case 'tool-result':
        this.#toolResult(event);
        return;
      case 'run-end':
        this.#runEnd(event);
        return;
      default: {
        // Most of a step's events are passing checks: drop them before any lookup.
        if (this.#controlEvents === 'decisive' && !decisive(event)) return;
        const run = this.#runs.get(event.runId);
        if (!run?.agent.isRecording()) return;
        const control = controlEvent(event, this.#maxChars !== undefined, this.#controlEvents);
        if (control) run.agent.addEvent(control.name, control.attributes, event.at);
      }
    }
  }

  /**
   * A run whose spans would all be no-ops and whose tools need no context (no SDK and no context
   * manager registered, or tracing suppressed) and no metrics to record: the loop stops writing its
   * events here, and the sink forgets it (the tool wrapper then calls tools directly). What the
   * no-op API costs a run is then its start.
   */
  ignores(runStart: RunStartEvent): boolean {
    const run = this.#runs.get(runStart.runId);
    if (!run?.direct || this.#metrics) return false;
    this.#runs.delete(runStart.runId);
    return true;
  }

  readonly wrapToolExecution: ToolExecutionWrapper = Object.assign(
    (execute: () => unknown, call: ToolExecutionInfo): unknown => {
      const run = this.#runs.get(call.runId);
      if (!run) return execute();
      if (run.direct) return execute();
      if (run.inert) return context.with(run.context, execute);
      const span = this.#tracer.startSpan(
        this.#toolSpanName(call.tool),
        { kind: SpanKind.INTERNAL, startTime: call.startedAt, attributes: this.#toolAttributes(call) },
        run.context,
      );
      run.tools.set(call.callId, span);
      return context.with(trace.setSpan(run.context, span), execute);
    },
    {
      // Asked once the run's start is written here: a run this sink does not hold (ignored, or
      // traced elsewhere) would have its tools called directly anyway.
      ignores: (runId: string): boolean => {
        const run = this.#runs.get(runId);
        return run === undefined || run.direct;
      },
    },
  );

  #runStart(event: RunStartEvent): void {
    const provider = this.#providerName ?? inferProvider(event.model);
    const attributes: Attributes = {
      [genAi.operationName]: genAiOperation.invokeAgent,
      [genAi.agentName]: this.#agentName,
      [genAi.conversationId]: event.runId,
      [genAi.requestModel]: event.model,
      [this.#providerKey]: provider,
      'reins.run.id': event.runId,
      'reins.run.segment': event.segment ?? 0,
      'reins.limits.max_steps': event.limits.maxSteps,
    };
    const parent = context.active();
    const agent = this.#tracer.startSpan(
      `${genAiOperation.invokeAgent} ${this.#agentName}`,
      { kind: SpanKind.INTERNAL, startTime: event.at, attributes },
      parent,
    );
    if (this.#maxChars !== undefined && agent.isRecording()) {
      if (this.#semconv === 'latest') {
        if (event.system !== '')
          agent.setAttribute(
            genAi.systemInstructions,
            this.#cut(JSON.stringify([{ type: 'text', content: event.system }])),
          );
        agent.setAttribute(genAi.inputMessages, this.#cut(JSON.stringify(event.messages)));
      } else
        agent.addEvent(
          'gen_ai.content.prompt',
          { [genAi.prompt]: this.#cut(JSON.stringify({ system: event.system, messages: event.messages })) },
          event.at,
        );
    }
    const inert = !agent.isRecording() && !isSpanContextValid(agent.spanContext());
    this.#runs.set(event.runId, {
      agent,
      context: trace.setSpan(parent, agent),
      inert,
      direct: inert && !contextManagerRegistered(),
      requestModel: event.model,
      provider,
      maxOutputTokens: event.limits.maxOutputTokens,
      tools: new Map(),
      inputs: this.#maxChars === undefined ? undefined : new Map(),
      stepModel: undefined,
      chat: undefined,
    });
  }

  #requestModel(run: OpenRun, step: number): string {
    return run.stepModel?.step === step ? run.stepModel.model : run.requestModel;
  }

  #modelResponse(event: ModelResponseEvent): void {
    const run = this.#runs.get(event.runId);
    if (!run) return;
    const requestModel = this.#requestModel(run, event.step);
    this.#metrics?.modelResponse(event, run.provider, requestModel);
    if (run.inert) return;
    const { response } = event;
    if (run.inputs)
      for (const block of response.content)
        if (block.type === 'tool_use') run.inputs.set(block.id, block.input);
    const span = this.#chatSpan(run, requestModel, event.at - event.durationMs);
    if (span.isRecording()) {
      this.#setResponseAttributes(span, event, response);
      if (this.#maxChars !== undefined) {
        const output = this.#cut(JSON.stringify([{ role: 'assistant', content: response.content }]));
        if (this.#semconv === 'latest') span.setAttribute(genAi.outputMessages, output);
        else span.addEvent('gen_ai.content.completion', { [genAi.completion]: output }, event.at);
      }
    }
    span.end(event.at);
  }

  /** Set one by one: an attributes object would be built only for the SDK to walk and copy it. */
  #setResponseAttributes(span: Span, event: ModelResponseEvent, response: ModelResponse): void {
    span.setAttribute(genAi.responseFinishReasons, finishReasons(response.stopReason));
    span.setAttribute('reins.step', event.step);
    span.setAttribute('reins.cost_usd', event.costUsd);
    span.setAttribute('reins.usage_estimated', event.usageEstimated);
    if (response.model !== undefined) span.setAttribute(genAi.responseModel, response.model);
    if (response.id !== undefined) span.setAttribute(genAi.responseId, response.id);
    const usage = response.usage;
    if (usage) {
      span.setAttribute(
        genAi.usageInputTokens,
        usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
      );
      span.setAttribute(genAi.usageOutputTokens, usage.outputTokens);
      if (this.#semconv === 'latest') {
        span.setAttribute(genAi.usageCacheReadInputTokens, usage.cacheReadTokens);
        span.setAttribute(genAi.usageCacheCreationInputTokens, usage.cacheWriteTokens);
      }
    }
  }

  #modelError(event: ModelErrorEvent): void {
    const run = this.#runs.get(event.runId);
    if (!run) return;
    const requestModel = this.#requestModel(run, event.step);
    this.#metrics?.modelError(event, run.provider, requestModel);
    if (run.inert) return;
    const span = this.#chatSpan(run, requestModel, event.at - event.durationMs);
    span.setAttributes({ [genAi.errorType]: event.error.name, 'reins.step': event.step });
    span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
    span.end(event.at);
  }

  #chatSpan(run: OpenRun, requestModel: string, startTime: number): Span {
    // A step-prepare may switch the model for one step; every other call reuses the run's set.
    let chat = requestModel === run.requestModel ? run.chat : undefined;
    if (!chat) {
      const attributes: Attributes = {
        [genAi.operationName]: genAiOperation.chat,
        [this.#providerKey]: run.provider,
        [genAi.requestModel]: requestModel,
      };
      if (run.maxOutputTokens !== null) attributes[genAi.requestMaxTokens] = run.maxOutputTokens;
      chat = { name: `${genAiOperation.chat} ${requestModel}`, attributes };
      if (requestModel === run.requestModel) run.chat = chat;
    }
    return this.#tracer.startSpan(
      chat.name,
      { kind: SpanKind.CLIENT, startTime, attributes: chat.attributes },
      run.context,
    );
  }

  #toolSpanName(tool: string): string {
    let name = this.#toolSpanNames.get(tool);
    if (name === undefined) {
      name = `${genAiOperation.executeTool} ${tool}`;
      if (this.#toolSpanNames.size < 1_000) this.#toolSpanNames.set(tool, name);
    }
    return name;
  }

  #toolAttributes(call: Pick<ToolExecutionInfo, 'tool' | 'callId' | 'step'>): Attributes {
    return {
      [genAi.operationName]: genAiOperation.executeTool,
      [genAi.toolName]: call.tool,
      [genAi.toolCallId]: call.callId,
      [genAi.toolType]: 'function',
      'reins.step': call.step,
    };
  }

  #toolResult(event: ToolResultEvent): void {
    const run = this.#runs.get(event.runId);
    if (!run) return;
    this.#metrics?.toolResult(event);
    if (run.inert) return;
    let span = run.tools.get(event.callId);
    if (span) run.tools.delete(event.callId);
    else
      span = this.#tracer.startSpan(
        this.#toolSpanName(event.tool),
        {
          kind: SpanKind.INTERNAL,
          startTime: event.at - event.durationMs,
          attributes: this.#toolAttributes(event),
        },
        run.context,
      );
    if (span.isRecording()) {
      span.setAttribute('reins.tool.status', event.status);
      if (event.isError) {
        span.setAttribute(genAi.errorType, event.error?.name ?? event.status);
        span.setStatus({ code: SpanStatusCode.ERROR, message: event.status });
      }
      if (this.#maxChars !== undefined) this.#toolContent(run, event, span);
    }
    run.inputs?.delete(event.callId);
    span.end(event.at);
  }

  #toolContent(run: OpenRun, event: ToolResultEvent, span: Span): void {
    const input = run.inputs?.get(event.callId);
    const argumentsText = input === undefined ? undefined : this.#cut(JSON.stringify(input));
    const result = this.#cut(event.content);
    if (this.#semconv === 'latest') {
      if (argumentsText !== undefined) span.setAttribute(genAi.toolCallArguments, argumentsText);
      span.setAttribute(genAi.toolCallResult, result);
    } else {
      if (argumentsText !== undefined)
        span.addEvent(
          'gen_ai.content.prompt',
          { [genAi.prompt]: argumentsText },
          event.at - event.durationMs,
        );
      span.addEvent('gen_ai.content.completion', { [genAi.completion]: result }, event.at);
    }
  }

  #runEnd(event: RunEndEvent): void {
    this.#metrics?.runEnd(event);
    const run = this.#runs.get(event.runId);
    if (!run) return;
    this.#runs.delete(event.runId);
    const { agent } = run;
    for (const span of run.tools.values()) span.end(event.at);
    if (agent.isRecording()) {
      const control = controlEvent(event, this.#maxChars !== undefined);
      if (control) agent.addEvent(control.name, control.attributes, event.at);
      agent.setAttributes({
        'reins.outcome.kind': event.outcome.kind,
        'reins.run.steps': event.steps,
        'reins.run.cost_usd': event.costUsd,
        [genAi.usageInputTokens]:
          event.usage.inputTokens + event.usage.cacheReadTokens + event.usage.cacheWriteTokens,
        [genAi.usageOutputTokens]: event.usage.outputTokens,
      });
      const status = outcomeStatus(event.outcome);
      if (status) {
        agent.setAttribute(genAi.errorType, status.errorType);
        agent.setStatus({ code: SpanStatusCode.ERROR, message: status.message });
      }
    }
    agent.end(event.at);
  }

  #cut(text: string | undefined): string {
    const value = text ?? '';
    const max = this.#maxChars ?? 0;
    return value.length > max ? `${value.slice(0, max)}…[${value.length - max} more chars]` : value;
  }
}

const noopMeter = createNoopMeter();

/** Whether `meter` is this API's no-op meter (another copy's is taken for a real one: it records). */
function isNoopMeter(meter: Meter): boolean {
  return (
    meter.createHistogram === noopMeter.createHistogram &&
    meter.createCounter === noopMeter.createCounter &&
    meter.createObservableGauge === noopMeter.createObservableGauge
  );
}

const probe = ROOT_CONTEXT.setValue(createContextKey('reins.otel.context-probe'), true);
const probeIsActive = () => context.active() === probe;

/**
 * Whether a context manager is registered now: the API's no-op one never makes a context active.
 * Asked once per run (one may be registered after the sink is made).
 */
function contextManagerRegistered(): boolean {
  return context.with(probe, probeIsActive);
}

/** `gen_ai.response.finish_reasons` values for reins's stop reasons. */
function finishReason(stopReason: ModelResponse['stopReason']): string {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_call';
    case 'max_tokens':
    case 'context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      return stopReason;
  }
}

const finishReasonLists = new Map<string, string[]>();

/**
 * `[finishReason(stopReason)]`, one array per reason for the process: the SDK copies an array
 * attribute into the span, so a shared one is safe and a step need not make its own.
 */
function finishReasons(stopReason: ModelResponse['stopReason']): string[] {
  let list = finishReasonLists.get(stopReason);
  if (list === undefined) {
    list = [finishReason(stopReason)];
    if (finishReasonLists.size < 100) finishReasonLists.set(stopReason, list);
  }
  return list;
}

/** A `gen_ai.provider.name` from a model id, or `_OTHER` as the conventions ask. */
export function inferProvider(model: string): string {
  const id = model.toLowerCase().replace(/^[a-z0-9-]+\//, (prefix) => (prefix === 'models/' ? '' : prefix));
  if (/^(anthropic\/)?claude/.test(id)) return 'anthropic';
  if (/^(openai\/)?(gpt|o\d|chatgpt|text-embedding)/.test(id)) return 'openai';
  if (/^(google\/)?gemini/.test(id)) return 'gcp.gemini';
  if (/^(mistral\/)?(mistral|mixtral|codestral|magistral)/.test(id)) return 'mistral_ai';
  return '_OTHER';
}
