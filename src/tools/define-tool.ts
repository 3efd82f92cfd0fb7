import type { JobBudget } from '../budget/job-budget.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { JsonValue } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';
import { InputFields } from './input-fields.js';
import type { InferOutput, StandardIssue, StandardResult, StandardSchema } from './standard-schema.js';

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
  /**
   * Aborted on timeout, cancellation, or a fatal sibling error. Pass it to every await. Made when
   * first read (a getter), so `{ ...context }` does not copy it: pass `context.signal` by name.
   */
  signal: AbortSignal;
  actor: Actor | undefined;
  runId: string;
  step: number;
  callId: string;
  /**
   * The job's budget, when the run was given one (`runAgent({ jobBudget })`): a tool that calls a
   * model charges it (`budgetedModel(model, context.jobBudget, context.spender)`), and `agentTool`
   * hands it to its sub-agent.
   */
  readonly jobBudget?: JobBudget | undefined;
  /** This call's name on the job's bill: `<run's spender>/tool:<name>`. */
  readonly spender?: string;
  /**
   * True when untrusted content was in the run's context when the call started: whatever the
   * model put in this call's input may have been steered by it (`agentTool` starts its sub-agent
   * tainted then).
   */
  readonly tainted?: boolean;
}

/** One problem with a tool's input, as the model is told. */
export interface InputIssue {
  /** Dotted path to the field (`items.2.sku`), or `(input)` for the whole value. */
  path: string;
  message: string;
}

export type InputValidation<Input> = { ok: true; value: Input } | { ok: false; issues: InputIssue[] };

/** What calling a tool does to the world. */
export type ToolEffect = 'read' | 'write' | 'destructive';

/**
 * How much the agent may do with a tool on its own: run it, pause for a human (`confirm`), return a
 * draft for a human to carry out (`draft`), or only record the proposal (`never`).
 */
export type ToolAutonomy = 'autonomous' | 'confirm' | 'draft' | 'never';

/** One semantic problem with an input, found before any side effect. */
export interface Precondition {
  /** The field at fault, dotted (`end`, `attendees.2`). */
  field: string;
  /** What is wrong and how to fix it, written for the model. */
  message: string;
}

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
  readonly effect: ToolEffect;
  readonly autonomy: ToolAutonomy;
  /** Whether the output comes from a source the agent controls. Untrusted output taints the context. */
  readonly trustedOutput: boolean;
  /** Dotted paths (with `*`) of output fields whose values are trusted even when the rest is not (ids, timestamps). */
  readonly trustedOutputFields: readonly string[];
  /** A tool that may not run while untrusted content is in the context, unless its sensitive arguments have trusted provenance. */
  readonly requiresTrustedContext: boolean;
  /** Input paths whose provenance matters under taint (a recipient, an amount); `all` checks every field. */
  readonly sensitiveArguments: readonly string[] | 'all';
  /** With `sensitiveArguments: 'all'`, the input paths left unchecked (a body, a subject). */
  readonly nonSensitiveArguments: readonly string[];
  /** Whether the output holds private data (see `ToolSpec.privateOutput`). */
  readonly privateOutput: boolean;
  /** The largest result the model is shown; the run's `maxResultTokens` applies when unset. */
  readonly maxResultTokens: number | undefined;
  /** How to fetch what a cut result left out, for the truncation marker ("call search_logs with offset"). */
  readonly paging: string | undefined;
  /** Synchronous when the schema is (zod's are): this runs on every call. */
  validate(input: unknown): InputValidation<Input> | Promise<InputValidation<Input>>;
  /** Semantic checks after the schema passed and before any side effect. */
  preconditions(input: Input, context: ToolContext): Precondition[] | Promise<Precondition[]>;
  /** False when `preconditions` never finds a problem (the dispatcher then skips it); unset means it may. */
  readonly hasPreconditions?: boolean;
  /** Problems with a result: schema issues and broken invariants. Empty when it may reach the model. */
  checkOutput(output: unknown): string[] | Promise<string[]>;
  execute(input: Input, context: ToolContext): Promise<Output> | Output;
}

/** The answer of an output check with nothing to check: shared, frozen (a push throws). */
const noProblems = Object.freeze([]) as unknown as string[];

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
  /**
   * What the tool does to the world; required, because autonomy is a per-tool decision. `read`
   * tools run in any context; others stop when `writesDisabled` is on and need trusted context.
   */
  effect: ToolEffect;
  /** @default 'confirm' for destructive tools, else 'autonomous' */
  autonomy?: ToolAutonomy;
  /** Output from a system the agent controls (your own database). @default false: untrusted */
  trustedOutput?: boolean;
  /** Output fields that are trusted even in untrusted output (`emails.*.id`). @default [] */
  trustedOutputFields?: readonly string[];
  /** @default true unless `effect` is 'read' (and the read has no `sideEffects`) */
  requiresTrustedContext?: boolean;
  /**
   * A read that changes the world (a GET that deletes, a "mark as read" fetch) is privileged like
   * a write: it needs trusted context. @default false
   */
  sideEffects?: boolean;
  /**
   * The output holds private data (balances, mail, files): arguments derived from it may reach
   * only allowed readers and never leave through an egress argument while the context is tainted.
   * @default false
   */
  privateOutput?: boolean;
  /** Input paths whose provenance is checked under taint. @default 'all' */
  sensitiveArguments?: readonly string[] | 'all';
  /**
   * The inverse of `sensitiveArguments`: every argument is checked except these (a body, a
   * subject), so a field added later is checked by default. Not with `sensitiveArguments`.
   */
  nonSensitiveArguments?: readonly string[];
  /** @default the run's `maxResultTokens` */
  maxResultTokens?: number;
  /** How to get what a truncated result left out. */
  paging?: string;
  /** Semantic checks before any side effect; return one problem per bad field. */
  preconditions?: (input: InferOutput<S>, context: ToolContext) => Precondition[] | Promise<Precondition[]>;
  /** A schema the result must satisfy; a result that fails never reaches the model. */
  output?: StandardSchema<unknown, Output>;
  /** Cross-field checks on the result; return a message per broken invariant. */
  invariants?: (output: Output) => string[];
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
 *   effect: 'read',
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
  if (!['read', 'write', 'destructive'].includes(spec.effect)) {
    throw new ConfigurationError(
      `tool ${spec.name}.effect`,
      `must be 'read', 'write' or 'destructive', got ${String(spec.effect)}`,
    );
  }
  if (spec.autonomy !== undefined && !['autonomous', 'confirm', 'draft', 'never'].includes(spec.autonomy)) {
    throw new ConfigurationError(
      `tool ${spec.name}.autonomy`,
      `must be 'autonomous', 'confirm', 'draft' or 'never', got ${String(spec.autonomy)}`,
    );
  }
  if (
    spec.maxResultTokens !== undefined &&
    !(Number.isInteger(spec.maxResultTokens) && spec.maxResultTokens > 0)
  ) {
    throw new ConfigurationError(
      `tool ${spec.name}.maxResultTokens`,
      `must be a whole number > 0, got ${spec.maxResultTokens}`,
    );
  }
  const inputJsonSchema = spec.inputJsonSchema ?? jsonSchemaOf(spec.name, spec.input);
  if (spec.sensitiveArguments !== undefined)
    assertSensitiveFields(spec.name, spec.sensitiveArguments, inputJsonSchema);
  if (spec.nonSensitiveArguments !== undefined) {
    if (spec.sensitiveArguments !== undefined)
      throw new ConfigurationError(
        `tool ${spec.name}.nonSensitiveArguments`,
        'give sensitiveArguments or nonSensitiveArguments, not both',
      );
    assertSensitiveFields(spec.name, spec.nonSensitiveArguments, inputJsonSchema, 'nonSensitiveArguments');
  }
  const outputSchema = spec.output?.['~standard'];
  return {
    name: spec.name,
    description: spec.description,
    inputJsonSchema,
    scopes: spec.scopes ?? [],
    timeoutMs: spec.timeoutMs,
    effect: spec.effect,
    autonomy: spec.autonomy ?? (spec.effect === 'destructive' ? 'confirm' : 'autonomous'),
    trustedOutput: spec.trustedOutput ?? false,
    trustedOutputFields: spec.trustedOutputFields ?? [],
    requiresTrustedContext:
      spec.requiresTrustedContext ?? (spec.effect !== 'read' || spec.sideEffects === true),
    sensitiveArguments: spec.sensitiveArguments ?? 'all',
    nonSensitiveArguments: spec.nonSensitiveArguments ?? [],
    privateOutput: spec.privateOutput ?? false,
    maxResultTokens: spec.maxResultTokens,
    paging: spec.paging,
    validate(input) {
      const result = standard.validate(input);
      return typeof (result as { then?: unknown }).then === 'function'
        ? (result as Promise<StandardResult<InferOutput<S>>>).then(validationOf)
        : validationOf(result as StandardResult<InferOutput<S>>);
    },
    preconditions(input, context) {
      return spec.preconditions ? spec.preconditions(input, context) : [];
    },
    hasPreconditions: spec.preconditions !== undefined,
    // Synchronous when there is nothing to check: this runs on every call.
    checkOutput:
      outputSchema === undefined && spec.invariants === undefined
        ? () => noProblems
        : async (output) => {
            if (outputSchema) {
              const result = await outputSchema.validate(output);
              if (result.issues !== undefined) {
                return result.issues.map((issue) => {
                  const { path, message } = toInputIssue(issue);
                  return `${path === '(input)' ? '(output)' : path}: ${message}`;
                });
              }
            }
            return spec.invariants ? spec.invariants(output as Output) : [];
          },
    execute: spec.execute,
  };
}

/**
 * A sensitive argument that names no field of the schema (`recipient` for `to`, or `To`) would
 * silently leave that field unchecked: the guard finds no value there and passes the call.
 */
function assertSensitiveFields(
  name: string,
  sensitive: readonly string[] | 'all',
  schema: { [key: string]: JsonValue },
  option = 'sensitiveArguments',
): void {
  if (sensitive === 'all' && option === 'sensitiveArguments') return;
  const label = `tool ${name}.${option}`;
  if (!Array.isArray(sensitive))
    throw new ConfigurationError(label, `must be 'all' or a list of input paths, got ${String(sensitive)}`);
  const fields = new InputFields(schema);
  for (const path of sensitive) {
    if (typeof path !== 'string' || path === '')
      throw new ConfigurationError(label, `must hold dotted input paths, got ${JSON.stringify(path)}`);
    if (fields.has(path)) continue;
    const segments = path.split('.');
    const last = segments.pop() as string;
    const names = fields.names(segments);
    const near = names.find((candidate) => candidate.toLowerCase() === last.toLowerCase());
    const hint =
      near === undefined
        ? ''
        : ` (field names are case-sensitive: did you mean "${[...segments, near].join('.')}"?)`;
    const known =
      names.length === 0 ? '' : `; the fields there are ${names.map((field) => `"${field}"`).join(', ')}`;
    throw new ConfigurationError(
      label,
      `"${path}" names no field of the input schema, so the taint guard would check nothing there${hint}${known}`,
    );
  }
}

function validationOf<Output>(result: StandardResult<Output>): InputValidation<Output> {
  if (result.issues === undefined) return { ok: true, value: result.value };
  return { ok: false, issues: result.issues.map(toInputIssue) };
}

/**
 * Input JSON Schemas by schema object. An agent builds its tools for every run (their `execute`
 * closes over the run), usually from schemas made once; converting one again each run was a sixth of
 * a queued 6-step run's build. Each tool gets its own copy (a clone costs a few µs, the conversion
 * tens): a tool's schema changed in place must not change the others made from the same schema.
 */
const jsonSchemas = new WeakMap<object, { [key: string]: JsonValue }>();

function jsonSchemaOf(name: string, schema: StandardSchema): { [key: string]: JsonValue } {
  const cached = jsonSchemas.get(schema);
  if (cached) return structuredClone(cached);
  const generate = schema['~standard'].jsonSchema?.input;
  if (!generate) {
    throw new ConfigurationError(
      `tool ${name}.inputJsonSchema`,
      'the input schema cannot describe itself as JSON Schema; pass inputJsonSchema',
    );
  }
  const { $schema: _ignored, ...rest } = generate({ target: 'draft-2020-12' });
  jsonSchemas.set(schema, structuredClone(rest) as { [key: string]: JsonValue });
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
