import { ConfigurationError } from '../errors/reins-error.js';
import type { JsonValue } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';
import type { InferOutput, StandardIssue, StandardSchema } from './standard-schema.js';

/** The end user a run acts for. Tools are authorized against this, never the agent's own rights. */
export interface Actor {
  id: string;
  /** Scopes the actor holds; the default authorizer requires every scope a tool declares. */
  scopes?: readonly string[];
  /** Anything else an authorizer needs (tenant, roles). */
  attributes?: Readonly<Record<string, JsonValue>>;
}

/** What a tool's `execute` receives besides its input. */
export interface ToolContext {
  /** Aborted on timeout, cancellation, or a fatal sibling error. Pass it to every await. */
  signal: AbortSignal;
  actor: Actor | undefined;
  runId: string;
  step: number;
  callId: string;
}

/** One problem with a tool's input, as the model is told. */
export interface InputIssue {
  /** Dotted path to the field (`items.2.sku`), or `(input)` for the whole value. */
  path: string;
  message: string;
}

export type InputValidation<Input> = { ok: true; value: Input } | { ok: false; issues: InputIssue[] };

/** A tool the loop can dispatch. Build one with {@link defineTool}. */
export interface Tool<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input, as providers receive it. */
  readonly inputJsonSchema: { [key: string]: JsonValue };
  /** Scopes the actor must hold to call this tool. */
  readonly scopes: readonly string[];
  /** Per-call timeout; the run's `toolTimeoutMs` applies when unset. */
  readonly timeoutMs: number | undefined;
  validate(input: unknown): Promise<InputValidation<Input>>;
  execute(input: Input, context: ToolContext): Promise<Output> | Output;
}

/** Anything a list of tools may hold, whatever its input type. */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous tool list needs an open input type
export type AnyTool = Tool<any, unknown>;

/** What {@link defineTool} takes. */
export interface ToolSpec<S extends StandardSchema, Output> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what both major providers accept). */
  name: string;
  /** What the tool does and when to use it: the model reads this. */
  description: string;
  /** A Standard Schema (zod 4, valibot, arktype) for the input. */
  input: S;
  /** JSON Schema to send to providers; derived from `input` when the schema library can. */
  inputJsonSchema?: { [key: string]: JsonValue };
  /** @default [] */
  scopes?: readonly string[];
  /** @default the run's `toolTimeoutMs` */
  timeoutMs?: number;
  execute(input: InferOutput<S>, context: ToolContext): Promise<Output> | Output;
}

const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines a tool. Input is validated against the schema before `execute` runs; invalid input never
 * reaches it, and the model gets one short line per bad field.
 *
 * @example
 * import { z } from 'zod';
 * const getOrder = defineTool({
 *   name: 'get_order',
 *   description: 'Look up one order by id.',
 *   input: z.object({ orderId: z.string() }),
 *   scopes: ['orders:read'],
 *   execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
 * });
 */
export function defineTool<S extends StandardSchema, Output>(
  spec: ToolSpec<S, Output>,
): Tool<InferOutput<S>, Output> {
  if (!toolNamePattern.test(spec.name)) {
    throw new ConfigurationError(
      'tool.name',
      `"${spec.name}" must match ${toolNamePattern} (provider limit)`,
    );
  }
  if (typeof spec.description !== 'string' || spec.description.trim() === '') {
    throw new ConfigurationError(
      `tool ${spec.name}.description`,
      'must be a non-empty string the model can read',
    );
  }
  const standard = spec.input?.['~standard'];
  if (!standard || typeof standard.validate !== 'function') {
    throw new ConfigurationError(
      `tool ${spec.name}.input`,
      'must be a Standard Schema (for example a zod 4 schema)',
    );
  }
  if (spec.timeoutMs !== undefined && !(spec.timeoutMs > 0)) {
    throw new ConfigurationError(
      `tool ${spec.name}.timeoutMs`,
      `must be a positive number, got ${spec.timeoutMs}`,
    );
  }
  const inputJsonSchema = spec.inputJsonSchema ?? jsonSchemaOf(spec.name, spec.input);
  return {
    name: spec.name,
    description: spec.description,
    inputJsonSchema,
    scopes: spec.scopes ?? [],
    timeoutMs: spec.timeoutMs,
    async validate(input) {
      const result = await standard.validate(input);
      if (result.issues === undefined) return { ok: true, value: result.value as InferOutput<S> };
      return { ok: false, issues: result.issues.map(toInputIssue) };
    },
    execute: spec.execute,
  };
}

function jsonSchemaOf(name: string, schema: StandardSchema): { [key: string]: JsonValue } {
  const generate = schema['~standard'].jsonSchema?.input;
  if (!generate) {
    throw new ConfigurationError(
      `tool ${name}.inputJsonSchema`,
      'the input schema cannot describe itself as JSON Schema; pass inputJsonSchema',
    );
  }
  const { $schema: _ignored, ...rest } = generate({ target: 'draft-2020-12' });
  return rest as { [key: string]: JsonValue };
}

function toInputIssue(issue: StandardIssue): InputIssue {
  const segments = (issue.path ?? []).map((segment) =>
    String(typeof segment === 'object' && segment !== null ? segment.key : segment),
  );
  return { path: segments.length === 0 ? '(input)' : segments.join('.'), message: issue.message };
}

/** The provider-facing definition of a tool. */
export function toolDefinitionOf(tool: AnyTool): ToolDefinition {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputJsonSchema };
}
