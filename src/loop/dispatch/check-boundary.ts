import { errorInfo } from '../../errors/error-info.js';
import type { ToolUseBlock } from '../../model/content.js';
import type { AnyTool, InputValidation } from '../../tools/define-tool.js';
import { type Guarded, guard } from '../boundary.js';
import type { CallPlan } from '../call-plan.js';
import type { MaybePromise } from './maybe-async.js';
import { errorContent, planOf, type Settled, settled } from './settlement.js';

/** Stage 1a: arguments that are not JSON, or a tool that does not exist or is not offered at this step. */
export function checkCall(
  call: ToolUseBlock,
  tools: ReadonlyMap<string, AnyTool>,
  offered: ReadonlySet<string> | undefined,
): Settled | undefined {
  if (call.input === undefined && call.inputText !== undefined) {
    return settled(
      'invalid_json',
      errorContent(
        'invalid_json',
        `The arguments for ${call.name} were not valid JSON. Send the arguments again as one JSON object.`,
      ),
    );
  }
  if (tools.has(call.name) && (offered === undefined || offered.has(call.name))) return undefined;
  const names = [...tools.keys()];
  const available = (offered === undefined ? names : names.filter((name) => offered.has(name))).join(', ');
  return settled(
    'unknown_tool',
    errorContent('unknown_tool', `There is no tool named "${call.name}". Available tools: ${available}.`),
  );
}

const forbiddenKeys = new Set(['__proto__', 'constructor', 'prototype']);

interface Inspection {
  forbidden?: string;
  chars: number;
}

/**
 * One walk over a call's input: the first forbidden key (a prototype-pollution vector) and a
 * lower bound on its JSON length (strings and keys), so the exact length is computed only for
 * inputs that might be too large.
 */
function inspectInput(value: unknown, path: string, found: Inspection): void {
  if (typeof value === 'string') {
    found.chars += value.length;
    return;
  }
  if (value === null || typeof value !== 'object') {
    found.chars += 1;
    return;
  }
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (forbiddenKeys.has(key) && found.forbidden === undefined) found.forbidden = at;
    found.chars += key.length;
    inspectInput((value as Record<string, unknown>)[key], at, found);
  }
}

/** Stage 1b: more than `maxInputChars` of arguments, or a `__proto__` / `constructor` / `prototype` key. */
export function checkInputShape(tool: AnyTool, input: unknown, maxInputChars: number): Settled | undefined {
  const inspected: Inspection = { chars: 0 };
  inspectInput(input, '', inspected);
  const size =
    inspected.chars * 2 > maxInputChars ? (JSON.stringify(input ?? null)?.length ?? 0) : inspected.chars;
  if (size > maxInputChars) {
    return settled(
      'invalid_input',
      errorContent(
        'invalid_input',
        `The arguments for ${tool.name} are ${size.toLocaleString('en-US')} characters; the limit is ${maxInputChars.toLocaleString('en-US')}. Send less, or split the work.`,
      ),
    );
  }
  const forbidden = inspected.forbidden;
  if (forbidden) {
    return settled(
      'invalid_input',
      errorContent(
        'invalid_input',
        `Invalid input for ${tool.name}: the field name at ${forbidden} is not allowed. Remove it and call again.`,
      ),
    );
  }
  return undefined;
}

/** The input once the schema passed it (coerced, defaulted, stripped as the schema says). */
export interface ValidInput {
  kind: 'valid';
  input: unknown;
}

/** Stage 1c: the tool's input schema, inside the error boundary (a throwing `.refine` ends the run `schema`). */
export function validateInput(
  tool: AnyTool,
  input: unknown,
  signal: AbortSignal,
): MaybePromise<ValidInput | CallPlan> {
  const validated = guard('schema', () => tool.validate(input), signal);
  // A closure only for an asynchronous schema.
  if (validated instanceof Promise) return validated.then((settled) => validationOf(tool, settled));
  return validationOf(tool, validated);
}

function validationOf(tool: AnyTool, validated: Guarded<InputValidation<unknown>>): ValidInput | CallPlan {
  if (!validated.ok) return planOf(validated);
  try {
    return verdictOf(tool, validated.value);
  } catch (thrown) {
    return { kind: 'failed', source: 'schema', error: errorInfo(thrown) };
  }
}

function verdictOf(tool: AnyTool, validation: InputValidation<unknown>): ValidInput | Settled {
  if (validation.ok) return { kind: 'valid', input: validation.value };
  const problems = validation.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return settled(
    'invalid_input',
    errorContent(
      'invalid_input',
      `Invalid input for ${tool.name}: ${problems}. Fix these fields and call again.`,
    ),
  );
}
