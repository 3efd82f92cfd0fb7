import { failedCallCharge } from '../budget/failed-call-charge.js';
import { isJobBudgetExceeded, type JobBudgetExceeded, type Reservation } from '../budget/job-budget.js';
import { costUsdOf } from '../controls/price.js';
import { errorInfo } from '../errors/error-info.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { validUsage } from '../loop/stages/read-response.js';
import { type Message, textOf } from '../model/content.js';
import type { Model, ModelRequest, ModelResponse, ModelSettings, ToolDefinition } from '../model/model.js';
import { PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';
import type { InferOutput, StandardSchema } from '../tools/standard-schema.js';
import { raceSignal, stoppedFailure } from './abortable.js';
import type { OutputIssue, StageFailure } from './pipeline-outcome.js';
import type { PipelineRun } from './pipeline-run.js';
import { checkStageName, type Stage, type StageResult } from './stage.js';

/** A model stage: one bounded call whose answer must match a schema. */
export interface ModelStageSpec<Input, S extends StandardSchema> {
  name: string;
  model: Model;
  /** The output's schema (zod 4, or any Standard Schema). The stage's output is what it validates to. */
  output: S;
  /** The user message (or the whole conversation) for the call, from the stage's input. */
  prompt: (input: Input) => string | Message[];
  /** @default '' */
  system?: string;
  /** The call's bound, and what the job's budget reserves for its answer. Required: a stage is bounded. */
  maxOutputTokens: number;
  settings?: ModelSettings;
  /**
   * `tool`: the model must call one tool whose input schema is `output` (the provider constrains
   * the shape; the seeds' "forced tool_choice"). `json`: the answer's text is parsed as JSON (a
   * fenced block is unwrapped). @default 'tool' when the schema can describe itself as JSON Schema
   */
  mode?: 'tool' | 'json';
  /** What the forced tool is for, as the model reads it. @default `Answer with the ${name} result.` */
  description?: string;
}

/**
 * A stage that makes exactly one model call and validates its answer: the pipeline's unit of model
 * work. The job's budget is checked before the call (its prefill plus `maxOutputTokens` reserved,
 * settled to the usage); an answer that does not match `output` ends the pipeline
 * `invalid_output`, one cut off at `maxOutputTokens` `truncated`, a refusal `refused`, a throw
 * `model_error`: nothing after it runs.
 *
 * @example
 * import { z } from 'zod';
 * import { modelStage } from 'reins/pipeline';
 * import { scriptedModel } from 'reins/testing';
 * const classify = modelStage({
 *   name: 'classify',
 *   model: scriptedModel([{ toolCalls: [{ name: 'classify', input: { category: 'billing' } }] }]),
 *   output: z.object({ category: z.enum(['billing', 'bug', 'howto']) }),
 *   prompt: (ticket: string) => ticket,
 *   maxOutputTokens: 64,
 * });
 */
export function modelStage<Input, S extends StandardSchema>(
  spec: ModelStageSpec<Input, S>,
): Stage<Input, InferOutput<S>> {
  const name = checkStageName(spec.name, 'modelStage');
  if (typeof spec.model?.generate !== 'function')
    throw new ConfigurationError(`modelStage ${name}.model`, 'must implement generate(request)');
  if (typeof spec.output?.['~standard']?.validate !== 'function')
    throw new ConfigurationError(`modelStage ${name}.output`, 'must be a Standard Schema (a zod 4 schema)');
  if (!Number.isInteger(spec.maxOutputTokens) || spec.maxOutputTokens < 1)
    throw new ConfigurationError(
      `modelStage ${name}.maxOutputTokens`,
      `must be an integer ≥ 1 (one bounded call), got ${String(spec.maxOutputTokens)}`,
    );
  const jsonSchema = spec.output['~standard'].jsonSchema?.input;
  const mode = spec.mode ?? (jsonSchema ? 'tool' : 'json');
  if (mode === 'tool' && !jsonSchema)
    throw new ConfigurationError(
      `modelStage ${name}.mode`,
      "'tool' needs a schema that can describe itself as JSON Schema; use mode: 'json'",
    );
  const toolName = name.replace(/[^A-Za-z0-9_-]/g, '_');
  const tools: ToolDefinition[] = [];
  if (mode === 'tool' && jsonSchema) {
    const { $schema: _ignored, ...inputSchema } = jsonSchema({ target: 'draft-2020-12' });
    tools.push({
      name: toolName,
      description: spec.description ?? `Answer with the ${name} result.`,
      inputSchema: inputSchema as ToolDefinition['inputSchema'],
    });
  }
  const toolChoice: ModelRequest['toolChoice'] = mode === 'tool' ? { name: toolName } : 'none';
  // One counter per stage and estimator: it keeps this stage's system and tools counted once.
  const counters = new WeakMap<TokenEstimator, PrefillCounter>();
  return {
    name,
    kind: 'model',
    run(input, path, run, signal) {
      return run.leaf('model', path, () => {
        const prompt = spec.prompt(input);
        const request: ModelRequest = {
          system: spec.system ?? '',
          messages:
            typeof prompt === 'string'
              ? [{ role: 'user', content: [{ type: 'text', text: prompt }] }]
              : prompt,
          tools,
          toolChoice,
          maxOutputTokens: spec.maxOutputTokens,
          signal,
        };
        if (spec.settings !== undefined) request.settings = spec.settings;
        return call(spec, run, path, request, signal, mode, toolName, counters);
      });
    },
  };
}

async function call<S extends StandardSchema>(
  spec: ModelStageSpec<never, S>,
  run: PipelineRun,
  path: string,
  request: ModelRequest,
  signal: AbortSignal,
  mode: 'tool' | 'json',
  toolName: string,
  counters: WeakMap<TokenEstimator, PrefillCounter>,
): Promise<StageResult<InferOutput<S>>> {
  if (signal.aborted) return { ok: false, failure: stoppedFailure(path, signal) };
  const job = run.setup.jobBudget;
  let reservation: Reservation | undefined;
  if (job !== undefined) {
    let counter = counters.get(run.setup.estimator);
    if (counter === undefined) {
      counter = new PrefillCounter(run.setup.estimator);
      counters.set(run.setup.estimator, counter);
    }
    const reserved = job.reserve({
      spender: `${run.setup.spender}/stage:${path}`,
      model: spec.model.name,
      inputTokens: prefillOf(counter, request),
      maxOutputTokens: spec.maxOutputTokens,
    });
    if (!reserved.ok) return { ok: false, failure: overBudget(path, reserved.exceeded) };
    reservation = reserved.reservation;
  }
  const startedAt = run.setup.clock.now();
  const step = ++run.modelCalls;
  let pending: Promise<ModelResponse>;
  try {
    pending = spec.model.generate(request);
  } catch (thrown) {
    pending = Promise.reject(thrown);
  }
  const raced = await raceSignal(pending, signal);
  if (raced.kind !== 'value') {
    const thrown = raced.kind === 'thrown' ? raced.thrown : undefined;
    if (reservation && job) {
      if (raced.kind === 'stopped' || failedCallCharge(thrown) === 'keep') job.keep(reservation);
      else job.release(reservation);
    }
    if (raced.kind === 'stopped') return { ok: false, failure: stoppedFailure(path, signal) };
    if (isJobBudgetExceeded(thrown)) return { ok: false, failure: overBudget(path, thrown.exceeded) };
    const error = errorInfo(thrown);
    if (run.tracing)
      await run.emit({
        type: 'model-error',
        step,
        stage: path,
        error,
        durationMs: run.setup.clock.now() - startedAt,
      });
    return { ok: false, failure: { kind: 'model_error', stage: path, error } };
  }
  const response = raced.value;
  if (reservation && job) job.settle(reservation, response?.usage, response?.model);
  let usage: ReturnType<typeof validUsage>;
  try {
    usage = validUsage(response?.usage);
  } catch {
    usage = undefined;
  }
  const content = Array.isArray(response?.content) ? response.content : [];
  const text = textOf(content);
  const counted = usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const price = run.setup.prices?.resolve(
    response?.model?.trim() ? response.model : undefined,
    spec.model.name,
  );
  const costUsd = price ? costUsdOf(counted, price.price) : 0;
  run.bill(counted, costUsd);
  if (run.tracing) {
    const now = run.setup.clock.now();
    const prefillTokens = counted.inputTokens + counted.cacheReadTokens + counted.cacheWriteTokens;
    await run.emit(
      {
        type: 'model-response',
        step,
        stage: path,
        response,
        thought: text,
        usageEstimated: usage === undefined,
        prefillTokens,
        costUsd,
        contextTokens: prefillTokens + counted.outputTokens,
        billedTokens: run.billedTokens,
        durationMs: now - startedAt,
      },
      now,
    );
  }
  if (response?.stopReason === 'max_tokens')
    return { ok: false, failure: { kind: 'truncated', stage: path, text } };
  if (response?.stopReason === 'refusal')
    return { ok: false, failure: { kind: 'refused', stage: path, text } };
  let candidate: unknown;
  if (mode === 'tool') {
    const used = content.find((block) => block.type === 'tool_use' && block.name === toolName);
    if (used?.type !== 'tool_use')
      return invalid(path, text, [{ path: '(output)', message: `no call to ${toolName}` }]);
    candidate = used.input;
  } else {
    const parsed = parseJson(text);
    if (!parsed.ok) return invalid(path, text, [{ path: '(output)', message: 'the answer is not JSON' }]);
    candidate = parsed.value;
  }
  let validated = spec.output['~standard'].validate(candidate);
  if (validated instanceof Promise) validated = await validated;
  if (validated.issues !== undefined)
    return invalid(path, text || JSON.stringify(candidate), validated.issues.map(toIssue));
  return { ok: true, output: validated.value as InferOutput<S> };
}

/**
 * The request's prefill as the loop counts it (system, tools and framing counted once per stage),
 * without remembering each message: a stage's messages are new on every call.
 */
function prefillOf(counter: PrefillCounter, request: ModelRequest): number {
  const { estimator } = counter;
  let tokens =
    counter.system(request.system) +
    counter.tools(request.tools) +
    counter.framing(request.system, request.tools);
  for (const message of request.messages) {
    if (estimator.countMessage) tokens += estimator.countMessage(message);
    else for (const block of message.content) tokens += counter.block(block);
  }
  return tokens;
}

function overBudget(stage: string, exceeded: JobBudgetExceeded): StageFailure {
  const failure: StageFailure = {
    kind: 'over_budget',
    stage,
    budget: exceeded.budget,
    limit: exceeded.limit,
    actual: exceeded.actual,
    spender: exceeded.spender,
  };
  if (exceeded.unpriced !== undefined) failure.unpriced = exceeded.unpriced;
  return failure;
}

function invalid(stage: string, text: string, issues: OutputIssue[]): { ok: false; failure: StageFailure } {
  return { ok: false, failure: { kind: 'invalid_output', stage, issues, text } };
}

const fence = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const trimmed = text.trim();
  const body = fence.exec(trimmed)?.[1] ?? trimmed;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

function toIssue(issue: { message: string; path?: readonly unknown[] | undefined }): OutputIssue {
  const segments = (issue.path ?? []).map((segment) =>
    String(typeof segment === 'object' && segment !== null ? (segment as { key: unknown }).key : segment),
  );
  return { path: segments.length === 0 ? '(output)' : segments.join('.'), message: issue.message };
}
