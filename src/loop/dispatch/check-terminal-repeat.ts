import { canonicalJson } from '../../controls/canonical-json.js';
import { errorInfo } from '../../errors/error-info.js';
import type { ToolUseBlock } from '../../model/content.js';
import type { AnyTool } from '../../tools/define-tool.js';
import type { CallPlan, PlanRequest } from '../call-plan.js';
import { errorContent, settled } from './settlement.js';

/** The key under which a call's terminal failure is remembered. */
export function callKey(call: Pick<ToolUseBlock, 'name' | 'input' | 'inputText'>): string {
  return `${call.name}:${call.input === undefined ? `invalid:${call.inputText ?? ''}` : canonicalJson(call.input)}`;
}

/**
 * Stage 4: a call that already failed terminally is not run again. The key is the validated
 * input's; the request's `canonicalInput` serves when that input is the model's own, unchanged.
 */
export function checkTerminalRepeat(
  tool: AnyTool,
  input: unknown,
  request: PlanRequest,
): CallPlan | undefined {
  if (request.terminal.size === 0) return undefined;
  let key: string;
  try {
    key = repeatKey(tool, input, request);
  } catch (thrown) {
    // Only a schema that produced something canonical JSON cannot write (a cycle, a throwing toJSON).
    return { kind: 'failed', source: 'schema', error: errorInfo(thrown) };
  }
  if (!request.terminal.has(key)) return undefined;
  return settled(
    'blocked_repeat',
    errorContent(
      'repeated_terminal_failure',
      `This exact ${tool.name} call already failed and cannot succeed as it is. It was not run again. Change the arguments, use another tool, or tell the user what is blocking you.`,
    ),
  );
}

function repeatKey(tool: AnyTool, input: unknown, { call, verdict, canonicalInput }: PlanRequest): string {
  const unchanged = verdict?.decision !== 'edit' && call.input !== undefined && sameJson(call.input, input);
  return unchanged ? `${tool.name}:${canonicalInput}` : callKey({ name: tool.name, input });
}

function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return Array.isArray(value)
    ? prototype === Array.prototype
    : prototype === Object.prototype || prototype === null;
}

/**
 * True when both values are the same plain JSON data, so their canonical JSON is the same string.
 * False when unsure (a class instance, a Date): the key is then computed from the validated input.
 */
function sameJson(raw: unknown, value: unknown): boolean {
  if (raw === value) return true;
  if (typeof raw !== 'object' || raw === null || typeof value !== 'object' || value === null) return false;
  if (!isPlain(raw) || !isPlain(value) || Array.isArray(raw) !== Array.isArray(value)) return false;
  if (Array.isArray(raw)) {
    const list = value as unknown[];
    if (list.length !== raw.length) return false;
    for (let i = 0; i < raw.length; i++) if (!sameJson(raw[i], list[i])) return false;
    return true;
  }
  const keys = Object.keys(raw);
  if (Object.keys(value).length !== keys.length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(value, key)) return false;
    if (!sameJson((raw as Record<string, unknown>)[key], (value as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}
