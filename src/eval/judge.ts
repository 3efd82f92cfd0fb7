import { ConfigurationError } from '../errors/reins-error.js';
import type { Model, ModelRequest, ModelSettings, Usage } from '../model/model.js';
import { addUsage, emptyUsage } from '../model/model.js';
import {
  gradeRequest,
  type JudgeRequestSettings,
  preferenceRequest,
  preferenceToolName,
  verdictToolName,
} from './judge-prompt.js';
import { type InvalidVerdict, type ReadSubmission, readSubmission } from './judge-response.js';
import { requireCount } from './require-count.js';

/** The rubric a judge grades by, versioned: a new version is a new ruler and needs a new calibration. */
export interface JudgeRubric {
  version: string;
  text: string;
}

export interface JudgeOptions<Label extends string> {
  /** Names the judge in reports. */
  id: string;
  model: Model;
  /**
   * The exact model id the judge must be answered by, as the provider reports it (`response.model`):
   * pin a dated snapshot. A response from any other model (a silent upgrade, a fallback) is an
   * invalid verdict with reason `model_mismatch`, never a grade.
   */
  modelId: string;
  rubric: JudgeRubric;
  /** The labels a grade may take, lowest first (order matters for weighted κ). @default ['fail', 'pass'] */
  scale?: readonly Label[];
  /** @default 1024 */
  maxOutputTokens?: number;
  /** Provider settings for every call (a temperature of 0, say). @default the adapter's */
  settings?: ModelSettings;
}

/** What a judge grades. */
export interface GradeInput {
  question: string;
  answer: string;
  /** A reference answer the rubric may compare against. */
  reference?: string;
  signal?: AbortSignal;
}

/** A pointwise grade: a label with the quotes from the answer that decide it, or why there is none. */
export type Grade<Label extends string = string> =
  | { kind: 'verdict'; label: Label; evidence: string[]; usage: Usage }
  | InvalidVerdict;

/** Two answers to compare. */
export interface CompareInput {
  question: string;
  a: string;
  b: string;
  signal?: AbortSignal;
}

/**
 * A pairwise comparison run in both orders. `preferred` when both orders picked the same answer;
 * `inconsistent` when the pick followed the position instead (count it as a tie); `invalid` when
 * either call gave no usable verdict. `usage` sums every call made.
 */
export type Comparison =
  | { kind: 'preferred'; winner: 'a' | 'b'; evidence: string[]; usage: Usage }
  | { kind: 'inconsistent'; firstOrder: 'a' | 'b'; secondOrder: 'a' | 'b'; usage: Usage }
  | (InvalidVerdict & { order: 'a_first' | 'b_first' });

/** A model call with a pinned model and a versioned rubric, that must quote its evidence. */
export interface Judge<Label extends string = 'fail' | 'pass'> {
  readonly id: string;
  readonly modelId: string;
  readonly rubric: JudgeRubric;
  readonly scale: readonly Label[];
  /** Grades one answer with one model call. Never throws for a model failure: that is `invalid`. */
  grade(input: GradeInput): Promise<Grade<Label>>;
  /** Compares two answers with two calls, (a, b) then (b, a). */
  compare(input: CompareInput): Promise<Comparison>;
}

/** The label a calibration shows for a call that gave no verdict; no scale may use it. */
export const invalidLabel = '(invalid)';

function checkOptions(options: JudgeOptions<string>, scale: readonly string[]): void {
  for (const option of ['id', 'modelId'] as const)
    if (options[option].trim() === '') throw new ConfigurationError(option, 'must not be empty');
  if (options.rubric.version.trim() === '')
    throw new ConfigurationError('rubric.version', 'must not be empty');
  if (options.rubric.text.trim() === '') throw new ConfigurationError('rubric.text', 'must not be empty');
  if (scale.length < 2)
    throw new ConfigurationError('scale', `needs at least two labels, got ${scale.length}`);
  const seen = new Set<string>();
  for (const label of scale) {
    if (label.trim() === '' || label === invalidLabel || seen.has(label))
      throw new ConfigurationError('scale', `"${label}" is empty, reserved or listed twice`);
    seen.add(label);
  }
  if (options.maxOutputTokens !== undefined) requireCount('maxOutputTokens', options.maxOutputTokens, 1);
}

/**
 * Defines an LLM judge: one model call per grade, through a forced tool call whose input is the
 * quoted evidence and the label. A verdict without quotes, or with a quote that is not in the answer
 * (after whitespace normalization), is `invalid` and never counts as a pass; so is a response from a
 * model other than `modelId`, and any model error or malformed output. Only an aborted `signal`
 * throws (the caller asked to stop).
 *
 * @example
 * import { scriptedModel } from 'reins/testing';
 * const judge = defineJudge({
 *   id: 'faithful',
 *   model: scriptedModel([{ toolCalls: [{ name: 'submit_verdict', input: { evidence: ['Paris'], label: 'pass' } }], model: 'judge-2026-01' }]),
 *   modelId: 'judge-2026-01',
 *   rubric: { version: 'v1', text: 'Pass when the answer names the right city.' },
 * });
 * const grade = await judge.grade({ question: 'Capital of France?', answer: 'Paris.' }); // { kind: 'verdict', label: 'pass', ... }
 */
export function defineJudge<const Label extends string = 'fail' | 'pass'>(
  options: JudgeOptions<Label>,
): Judge<Label> {
  const scale = options.scale ?? (['fail', 'pass'] as readonly string[] as readonly Label[]);
  checkOptions(options, scale);
  const { id, model, modelId, rubric } = options;
  const maxOutputTokens = options.maxOutputTokens ?? 1024;

  const context = (signal: AbortSignal | undefined): JudgeRequestSettings => ({
    maxOutputTokens,
    settings: options.settings,
    signal,
  });

  async function call(
    request: ModelRequest,
    expect: {
      toolName: string;
      choiceField: string;
      choices: readonly string[];
      evidenceFrom?: (choice: string) => number | undefined;
    },
    sources: readonly string[],
  ): Promise<ReadSubmission> {
    try {
      const response = await model.generate(request);
      return readSubmission(response, { ...expect, modelId }, sources);
    } catch (error) {
      if (request.signal?.aborted) throw error;
      const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { kind: 'invalid', reason: 'model_error', detail, usage: emptyUsage() };
    }
  }

  const pick = {
    toolName: preferenceToolName,
    choiceField: 'winner',
    choices: ['first', 'second'],
    evidenceFrom: (choice: string) => (choice === 'first' ? 0 : choice === 'second' ? 1 : undefined),
  };
  async function prefer(input: CompareInput, first: string, second: string) {
    const request = preferenceRequest(
      { question: input.question, first, second },
      rubric.text,
      context(input.signal),
    );
    return call(request, pick, [first, second]);
  }

  return {
    id,
    modelId,
    rubric,
    scale,
    async grade(input) {
      const request = gradeRequest(input, rubric.text, scale, context(input.signal));
      const read = await call(request, { toolName: verdictToolName, choiceField: 'label', choices: scale }, [
        input.answer,
      ]);
      if (read.kind === 'invalid') return read;
      return { kind: 'verdict', label: read.choice as Label, evidence: read.evidence, usage: read.usage };
    },
    async compare(input) {
      const aFirst = await prefer(input, input.a, input.b);
      if (aFirst.kind === 'invalid') return { ...aFirst, order: 'a_first' };
      const bFirst = await prefer(input, input.b, input.a);
      const usage = addUsage(aFirst.usage, bFirst.usage);
      if (bFirst.kind === 'invalid') return { ...bFirst, usage, order: 'b_first' };
      // Un-swap: in the second call, "first" is b.
      const firstOrder = aFirst.choice === 'first' ? 'a' : 'b';
      const secondOrder = bFirst.choice === 'first' ? 'b' : 'a';
      if (firstOrder !== secondOrder) return { kind: 'inconsistent', firstOrder, secondOrder, usage };
      return {
        kind: 'preferred',
        winner: firstOrder,
        evidence: [...aFirst.evidence, ...bFirst.evidence],
        usage,
      };
    },
  };
}
