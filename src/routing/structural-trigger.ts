import { type JsonValue, textOf, toolCallsOf } from '../model/content.js';
import type { ModelRequest, ToolDefinition } from '../model/model.js';
import type { StandardResult, StandardSchema } from '../tools/standard-schema.js';
import type { EscalationTrigger, TriggerInput, TriggerVerdict } from './escalation-trigger.js';

export interface StructuralTriggerOptions {
  /** The answer's text must be JSON that passes this schema (zod, valibot, arktype…). */
  textSchema?: StandardSchema;
  /** Per tool name: the call's input must pass this schema (beyond the required fields). */
  toolInputSchemas?: Readonly<Record<string, StandardSchema>>;
  /**
   * Tool calls must name a tool the request offered, carry parsed input (not unreadable argument
   * text) with the offered schema's `required` fields, and come when `toolChoice` demands one.
   * @default true
   */
  toolCalls?: boolean;
  /** Fewest characters of answer text, for a turn without tool calls. @default none */
  minChars?: number;
  /** Most characters of answer text. @default none */
  maxChars?: number;
  /** Escalate a `refusal` stop, and text matching any of `refusalPatterns`. @default true */
  refusal?: boolean;
  /** Text that reads as a refusal. @default none (only the provider's `refusal` stop) */
  refusalPatterns?: readonly RegExp[];
  /** Escalate an answer cut off at `max_tokens`. @default true */
  maxTokens?: boolean;
}

/**
 * The cheapest, most trusted trigger (post-06): deterministic checks of the answer's shape, no
 * model call. It misses confident wrongness (a valid, plausible, wrong answer): pair it with a
 * calibrated {@link confidenceTrigger} where that matters.
 *
 * @example
 * const escalate = structuralTrigger({ minChars: 20, refusalPatterns: [/I can(?:'|no)t help/i] });
 */
export function structuralTrigger(options: StructuralTriggerOptions = {}): EscalationTrigger {
  const { toolCalls = true, refusal = true, maxTokens = true } = options;
  // Copies without the g and y flags: a global pattern's test() starts where its last match ended,
  // so it would miss every other refusal.
  const refusalPatterns = options.refusalPatterns?.map(
    (pattern) => new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')),
  );
  return {
    name: 'structural',
    kinds: ['structural'],
    // Synchronous unless a schema validates asynchronously: a cascade stage stays a few µs.
    check({ request, response }: TriggerInput): TriggerVerdict | Promise<TriggerVerdict> {
      const escalate = (reason: string): TriggerVerdict => ({
        kind: 'escalate',
        trigger: 'structural',
        reason,
      });
      if (maxTokens && response.stopReason === 'max_tokens') return escalate('cut off at max_tokens');
      // Cut off another way: the loop would end the run (truncated, hard_error) on the cheap answer.
      if (response.stopReason === 'interrupted') return escalate('the stream was cut off (interrupted)');
      if (response.stopReason === 'context_window_exceeded')
        return escalate("the request did not fit the tier's context window");
      if (refusal && response.stopReason === 'refusal') return escalate('the model refused');
      const text = textOf(response.content);
      const calls = toolCallsOf(response.content);
      if (refusal && refusalPatterns?.some((pattern) => pattern.test(text)))
        return escalate('the text reads as a refusal');
      if (toolCalls) {
        const problem = toolCallProblem(request, calls);
        if (problem) return escalate(problem);
      }
      if (calls.length === 0 && options.minChars !== undefined && text.length < options.minChars)
        return escalate(`${text.length} characters, fewer than ${options.minChars}`);
      if (options.maxChars !== undefined && text.length > options.maxChars)
        return escalate(`${text.length} characters, more than ${options.maxChars}`);
      const checks: [StandardSchema, unknown, string][] = [];
      for (const call of calls) {
        const schema = options.toolInputSchemas?.[call.name];
        if (schema) checks.push([schema, call.input, `tool "${call.name}" input`]);
      }
      if (calls.length === 0 && options.textSchema) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return escalate('the text is not JSON');
        }
        checks.push([options.textSchema, parsed, "the text's JSON"]);
      }
      const verdictOf = (issue: string | undefined, what: string): TriggerVerdict | undefined =>
        issue === undefined ? undefined : escalate(`${what}: ${issue}`);
      for (let i = 0; i < checks.length; i++) {
        const [schema, value, what] = checks[i] as [StandardSchema, unknown, string];
        const result = schema['~standard'].validate(value);
        if (result instanceof Promise)
          return (async () => {
            const first = verdictOf(issueOf(await result), what);
            if (first) return first;
            for (const [laterSchema, laterValue, laterWhat] of checks.slice(i + 1)) {
              const later = verdictOf(
                issueOf(await laterSchema['~standard'].validate(laterValue)),
                laterWhat,
              );
              if (later) return later;
            }
            return { kind: 'keep' } as TriggerVerdict;
          })();
        const verdict = verdictOf(issueOf(result), what);
        if (verdict) return verdict;
      }
      return { kind: 'keep' };
    },
  };
}

function toolCallProblem(request: ModelRequest, calls: ReturnType<typeof toolCallsOf>): string | undefined {
  const choice = request.toolChoice;
  if (calls.length === 0) {
    if (choice === 'required') return 'no tool call where one was required';
    if (typeof choice === 'object') return `no call to "${choice.name}", which was required`;
    return undefined;
  }
  if (choice === 'none') return 'a tool call where none was allowed';
  const offered = new Map<string, ToolDefinition>(request.tools.map((tool) => [tool.name, tool]));
  for (const call of calls) {
    const tool = offered.get(call.name);
    if (!tool) return `tool "${call.name}" is not offered`;
    if (typeof choice === 'object' && call.name !== choice.name)
      return `a call to "${call.name}" where "${choice.name}" was required`;
    if (
      call.input === undefined ||
      call.input === null ||
      typeof call.input !== 'object' ||
      Array.isArray(call.input)
    )
      return `tool "${call.name}" input is not a JSON object`;
    const missing = requiredOf(tool.inputSchema).find((field) => !(field in (call.input as object)));
    if (missing !== undefined) return `tool "${call.name}" input lacks required "${missing}"`;
  }
  return undefined;
}

function requiredOf(schema: { [key: string]: JsonValue }): string[] {
  const required = schema.required;
  return Array.isArray(required)
    ? required.filter((field): field is string => typeof field === 'string')
    : [];
}

function issueOf(result: StandardResult<unknown>): string | undefined {
  if (!result.issues) return undefined;
  return result.issues[0]?.message ?? 'invalid';
}
