import type { JsonValue } from '../model/content.js';
import type { ModelRequest, ToolDefinition } from '../model/model.js';

/** The tool a judge answers a pointwise grade with. */
export const verdictToolName = 'submit_verdict';
/** The tool a judge answers a pairwise comparison with. */
export const preferenceToolName = 'submit_preference';

// `evidence` comes first in both schemas: models tend to fill properties in order, so the quotes
// are written before the label is chosen, not picked afterwards to fit it.
const evidenceSchema: { [key: string]: JsonValue } = {
  type: 'array',
  items: { type: 'string' },
  minItems: 1,
  description: 'Passages that decide the verdict, each copied word for word from the text graded.',
};

function verdictTool(scale: readonly string[]): ToolDefinition {
  return {
    name: verdictToolName,
    description: 'Submit the grade: the quoted evidence, then the label it supports.',
    inputSchema: {
      type: 'object',
      properties: { evidence: evidenceSchema, label: { type: 'string', enum: [...scale] } },
      required: ['evidence', 'label'],
      additionalProperties: false,
    },
  };
}

const preferenceTool: ToolDefinition = {
  name: preferenceToolName,
  description: 'Submit which answer is better: the quoted evidence, then the winner it supports.',
  inputSchema: {
    type: 'object',
    properties: { evidence: evidenceSchema, winner: { type: 'string', enum: ['first', 'second'] } },
    required: ['evidence', 'winner'],
    additionalProperties: false,
  },
};

function systemPrompt(rubric: string, task: string): string {
  return `You are an evaluator. ${task} Quote, word for word, the passages that decide your call; a call whose quotes are missing or not found verbatim is discarded.\n\nRubric:\n${rubric}`;
}

function tagged(tag: string, text: string): string {
  return `<${tag}>\n${text}\n</${tag}>`;
}

/** What a request carries apart from its content. */
export interface JudgeRequestSettings {
  maxOutputTokens: number;
  settings: ModelRequest['settings'];
  signal: AbortSignal | undefined;
}

function request(
  system: string,
  text: string,
  tool: ToolDefinition,
  { maxOutputTokens, settings, signal }: JudgeRequestSettings,
): ModelRequest {
  const built: ModelRequest = {
    system,
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    tools: [tool],
    toolChoice: { name: tool.name },
    maxOutputTokens,
  };
  if (settings !== undefined) built.settings = settings;
  if (signal !== undefined) built.signal = signal;
  return built;
}

/**
 * One pointwise grading call. The answer sits between `<answer>` tags; an answer that forges the
 * tags can steer the text the judge reads, but not the quote check, which runs on the answer itself.
 */
export function gradeRequest(
  input: { question: string; answer: string; reference?: string | undefined },
  rubric: string,
  scale: readonly string[],
  context: JudgeRequestSettings,
): ModelRequest {
  const parts = [tagged('question', input.question)];
  if (input.reference !== undefined) parts.push(tagged('reference', input.reference));
  parts.push(tagged('answer', input.answer));
  parts.push(
    `Grade the answer with ${verdictToolName}: a label from ${scale.join(', ')}, and evidence quoted from the answer.`,
  );
  const task = 'Grade the answer to the question against the rubric.';
  return request(systemPrompt(rubric, task), parts.join('\n\n'), verdictTool(scale), context);
}

/** One pairwise call, with the two answers in the order given. */
export function preferenceRequest(
  input: { question: string; first: string; second: string },
  rubric: string,
  context: JudgeRequestSettings,
): ModelRequest {
  const text = [
    tagged('question', input.question),
    tagged('first', input.first),
    tagged('second', input.second),
    `Which answer is better under the rubric? Answer with ${preferenceToolName}: the winner, first or second, and evidence quoted from the answers.`,
  ].join('\n\n');
  const task = 'Compare two answers to the question against the rubric.';
  return request(systemPrompt(rubric, task), text, preferenceTool, context);
}
