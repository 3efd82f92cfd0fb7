import fc from 'fast-check';
import { z } from 'zod';
import type { AnyTool } from '../../src/tools/define-tool.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { StandardSchema } from '../../src/tools/standard-schema.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { type Behavior, behaviors, good, player } from './behavior.js';
import type { DrivenClock } from './drive.js';
import { type HostileTag, hostile, hostileTag } from './hostile.js';

/** What `execute` produces, as generated. */
export type OutputSpec =
  | { kind: 'json'; value: unknown }
  | { kind: 'hostile'; tag: HostileTag }
  | { kind: 'toolError'; retry: 'yes' | 'no' | 'after'; fatal: boolean }
  | { kind: 'status'; status: number };

export type CheckSpec = 'none' | 'problems' | 'notArray';
export type ValidateSpec = 'valid' | 'invalid' | 'garbage';

export interface ToolSpecF {
  name: string;
  effect: 'read' | 'write' | 'destructive';
  autonomy: 'autonomous' | 'confirm' | 'draft' | 'never' | undefined;
  trustedOutput: boolean;
  timeoutMs: number | undefined;
  maxResultTokens: number | undefined;
  validate: 'zod' | Behavior<ValidateSpec>[];
  preconditions: Behavior<CheckSpec>[] | undefined;
  invariants: Behavior<CheckSpec>[] | undefined;
  output: Behavior<ValidateSpec>[] | undefined;
  execute: Behavior<OutputSpec>[];
}

export interface ToolOptions {
  /** Throws, hostile values and odd answers from the tool's own callbacks. */
  hostile: boolean;
  hang: boolean;
  /** Names that are also members of Object.prototype (`toString`, `__proto__`). */
  prototypeNames?: boolean;
}

export const plainToolNames = ['lookup', 'write_note', 'wipe', 'search'] as const;
export const prototypeToolNames = [
  'toString',
  'constructor',
  '__proto__',
  'hasOwnProperty',
  'valueOf',
] as const;

const outputSpec = (hostileOutputs: boolean): fc.Arbitrary<OutputSpec> =>
  hostileOutputs
    ? fc.oneof(
        {
          weight: 4,
          arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: 'json' as const, value })),
        },
        { weight: 2, arbitrary: hostileTag.map((tag) => ({ kind: 'hostile' as const, tag })) },
        {
          weight: 1,
          arbitrary: fc
            .record({
              retry: fc.constantFrom('yes' as const, 'no' as const, 'after' as const),
              fatal: fc.boolean(),
            })
            .map((r) => ({ kind: 'toolError' as const, ...r })),
        },
        {
          weight: 1,
          arbitrary: fc.constantFrom(400, 429, 503).map((status) => ({ kind: 'status' as const, status })),
        },
      )
    : fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'json' as const, value }));

export function toolSpecs(options: ToolOptions): fc.Arbitrary<ToolSpecF[]> {
  const names = options.prototypeNames
    ? fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...plainToolNames) },
        { weight: 1, arbitrary: fc.constantFrom(...prototypeToolNames) },
      )
    : fc.constantFrom(...plainToolNames);
  const hang = options.hang;
  const checks = options.hostile
    ? fc.option(behaviors(fc.constantFrom<CheckSpec>('none', 'problems', 'notArray'), { hang }), {
        nil: undefined,
      })
    : fc.constant(undefined);
  const spec = fc.record({
    effect: fc.constantFrom('read' as const, 'write' as const, 'destructive' as const),
    autonomy: fc.constantFrom(
      undefined,
      'autonomous' as const,
      'confirm' as const,
      'draft' as const,
      'never' as const,
    ),
    trustedOutput: fc.boolean(),
    timeoutMs: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: undefined }),
    maxResultTokens: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
    validate: options.hostile
      ? fc.oneof(
          fc.constant('zod' as const),
          behaviors(fc.constantFrom<ValidateSpec>('valid', 'invalid', 'garbage'), { hang }),
        )
      : fc.constant('zod' as const),
    preconditions: checks,
    invariants: checks,
    output: options.hostile
      ? fc.option(behaviors(fc.constantFrom<ValidateSpec>('valid', 'invalid', 'garbage'), { hang }), {
          nil: undefined,
        })
      : fc.constant(undefined),
    execute: options.hostile
      ? behaviors(outputSpec(true), { hang })
      : outputSpec(false).map((value) => [good(value)]),
  });
  return fc
    .uniqueArray(names, { minLength: 1, maxLength: 3 })
    .chain((list) => fc.tuple(...list.map((name) => spec.map((rest) => ({ name, ...rest })))));
}

/** One tool execution, as the fuzz tools record it. */
export interface Execution {
  runId: string;
  step: number;
  callId: string;
  tool: string;
  input: unknown;
}

function standardSchema(list: Behavior<ValidateSpec>[], clock: DrivenClock): StandardSchema {
  const next = player(list, clock, (spec): unknown => {
    if (spec === 'valid') return { value: { n: 1 } };
    if (spec === 'invalid') return { issues: [{ message: 'n is wrong', path: ['n'] }] };
    return { issues: 'not a list' };
  });
  return {
    '~standard': {
      version: 1,
      vendor: 'fuzz',
      // biome-ignore lint/suspicious/noExplicitAny: the schema's answer is whatever the behaviour says
      validate: () => next() as any,
    },
  } as StandardSchema;
}

function checksOf(list: Behavior<CheckSpec>[], clock: DrivenClock, field: boolean) {
  return player(list, clock, (spec): unknown => {
    if (spec === 'none') return [];
    if (spec === 'problems')
      return field ? [{ field: 'n', message: 'n is not allowed' }] : ['broken invariant'];
    return { not: 'an array' };
  });
}

function outputOf(spec: OutputSpec): unknown {
  switch (spec.kind) {
    case 'json':
      return structuredClone(spec.value);
    case 'hostile':
      return hostile(spec.tag);
    case 'toolError':
      throw new ToolError(`tool failed (${spec.retry})`, {
        code: 'fuzz_failure',
        retry: spec.retry,
        ...(spec.retry === 'after' ? { retryAfterSeconds: 3 } : {}),
        fatal: spec.fatal,
      });
    case 'status':
      throw Object.assign(new Error(`HTTP ${spec.status}`), { status: spec.status });
  }
}

/** Builds the tools; each execution is pushed to `log` before the tool does anything else. */
export function buildTools(specs: readonly ToolSpecF[], clock: DrivenClock, log: Execution[]): AnyTool[] {
  return specs.map((spec) => {
    const execute = player(spec.execute, clock, outputOf);
    const preconditions = spec.preconditions && checksOf(spec.preconditions, clock, true);
    const invariants = spec.invariants && checksOf(spec.invariants, clock, false);
    const input =
      spec.validate === 'zod'
        ? z.object({ n: z.number().optional(), s: z.string().optional() }).passthrough()
        : standardSchema(spec.validate, clock);
    return defineTool({
      name: spec.name,
      description: `fuzz tool ${spec.name}`,
      input: input as StandardSchema,
      inputJsonSchema: { type: 'object' },
      effect: spec.effect,
      ...(spec.autonomy === undefined ? {} : { autonomy: spec.autonomy }),
      trustedOutput: spec.trustedOutput,
      ...(spec.timeoutMs === undefined ? {} : { timeoutMs: spec.timeoutMs }),
      ...(spec.maxResultTokens === undefined ? {} : { maxResultTokens: spec.maxResultTokens }),
      ...(preconditions ? { preconditions: () => preconditions() as never } : {}),
      ...(invariants ? { invariants: () => invariants() as never } : {}),
      ...(spec.output ? { output: standardSchema(spec.output, clock) } : {}),
      execute: (value, context) => {
        log.push({
          runId: context.runId,
          step: context.step,
          callId: context.callId,
          tool: spec.name,
          input: value,
        });
        return execute();
      },
    }) as AnyTool;
  });
}
