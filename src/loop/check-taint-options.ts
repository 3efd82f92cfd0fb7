import type { ToolPolicy } from '../controls/taint-policy.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { AnyTool } from '../tools/define-tool.js';
import { InputFields } from '../tools/input-fields.js';
import type { TaintOptions } from './options.js';

const sourcePattern = /^(?:user|system|tool:[A-Za-z0-9_-]{1,64})$/;

/**
 * A policy or plan that names a tool or a field that does not exist would check nothing where the
 * user believes it checks something (`recipient` for `to`): each is a configuration error.
 */
export function validateTaintOptions(taint: TaintOptions | undefined, tools: readonly AnyTool[]): void {
  if (taint === undefined) return;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const policies = taint.policies ?? {};
  if (typeof policies !== 'object' || policies === null || Array.isArray(policies))
    throw new ConfigurationError('taint.policies', 'must be an object keyed by tool name');
  for (const [name, policy] of Object.entries(policies)) {
    const tool = byName.get(name);
    const label = `taint.policies.${name}`;
    if (!tool)
      throw new ConfigurationError(label, `names no tool of this run (${[...byName.keys()].join(', ')})`);
    validatePolicy(label, policy, new InputFields(tool.inputJsonSchema));
  }
  const plan = taint.plan ?? [];
  if (!Array.isArray(plan)) throw new ConfigurationError('taint.plan', 'must be a list of planned calls');
  plan.forEach((entry, index) => {
    const label = `taint.plan.${index}`;
    const tool = byName.get(entry?.tool);
    if (!tool)
      throw new ConfigurationError(`${label}.tool`, `names no tool of this run: ${String(entry?.tool)}`);
    if (entry.times !== undefined && !(Number.isInteger(entry.times) && entry.times > 0))
      throw new ConfigurationError(
        `${label}.times`,
        `must be a whole number > 0, got ${String(entry.times)}`,
      );
    const fields = new InputFields(tool.inputJsonSchema);
    for (const path of Object.keys(entry.arguments ?? {}))
      if (path.includes('*') || !fields.has(path))
        throw new ConfigurationError(
          `${label}.arguments`,
          `"${path}" names no field of ${tool.name}'s input`,
        );
  });
}

function validatePolicy(label: string, policy: ToolPolicy, fields: InputFields): void {
  if (typeof policy !== 'object' || policy === null) throw new ConfigurationError(label, 'must be an object');
  const field = (option: string, path: unknown) => {
    if (typeof path !== 'string' || path === '' || !fields.has(path))
      throw new ConfigurationError(
        `${label}.${option}`,
        `${JSON.stringify(path)} names no field of the tool's input`,
      );
  };
  for (const [path, sources] of Object.entries(policy.arguments ?? {})) {
    field('arguments', path);
    if (
      !Array.isArray(sources) ||
      sources.length === 0 ||
      !sources.every((source) => sourcePattern.test(source))
    )
      throw new ConfigurationError(
        `${label}.arguments.${path}`,
        `must list sources ('user', 'system', 'tool:<name>'), got ${JSON.stringify(sources)}`,
      );
  }
  if (policy.readers !== undefined) {
    if (!Array.isArray(policy.readers.arguments) || policy.readers.arguments.length === 0)
      throw new ConfigurationError(`${label}.readers.arguments`, 'must list the reader arguments');
    for (const path of policy.readers.arguments) field('readers.arguments', path);
    if (policy.readers.allowed !== undefined && typeof policy.readers.allowed !== 'function')
      throw new ConfigurationError(`${label}.readers.allowed`, 'must be a function');
  }
  for (const path of policy.egress ?? []) field('egress', path);
  const caps = policy.caps;
  if (caps === undefined) return;
  const positive = (option: string, value: unknown, whole: boolean) => {
    if (
      typeof value !== 'number' ||
      !(value > 0) ||
      !Number.isFinite(value) ||
      (whole && !Number.isInteger(value))
    )
      throw new ConfigurationError(
        `${label}.caps.${option}`,
        `must be a ${whole ? 'whole ' : ''}number > 0, got ${String(value)}`,
      );
  };
  if (caps.maxCalls !== undefined) positive('maxCalls', caps.maxCalls, true);
  if (caps.sum !== undefined) {
    field('caps.sum.argument', caps.sum.argument);
    positive('sum.max', caps.sum.max, false);
  }
  if (caps.perValue !== undefined) {
    field('caps.perValue.argument', caps.perValue.argument);
    positive('perValue.maxCalls', caps.perValue.maxCalls, true);
  }
}
