import { canonicalJson } from '../controls/canonical-json.js';
import { cyrb53 } from '../controls/text-hash.js';
import type { AgentConfig } from './eval-types.js';

/** Options that are objects with behaviour, not settings: left out of the fingerprint. */
const behaviour = new Set([
  'model',
  'tools',
  'clock',
  'checkpoint',
  'context',
  'authorize',
  'worldState',
  'prepareStep',
  'accountSpend',
  'estimator',
  'generateId',
  'approvals',
  'runId',
]);

/** The plain-data part of a value: functions and class instances dropped, cycles and depth cut. */
function plainOf(value: unknown, depth: number, seen: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value !== 'object' || depth > 8 || seen.has(value)) return undefined;
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => plainOf(item, depth + 1, seen) ?? null);
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return undefined;
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const plain = plainOf(member, depth + 1, seen);
      if (plain !== undefined) out[key] = plain;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * What a trial ran with, as a short hash: the model's name, the system prompt, each tool's name,
 * description, input schema, effect and limits, every plain setting (limits, budgets, prices, model
 * settings, taint options), the case's input, and the eval's `version`. A stored trial is reused on
 * resume only when its fingerprint is the one the same trial would run with now; what the
 * fingerprint cannot see (a model's weights behind the same name, a function's code) is what
 * `version` is for.
 */
export function configFingerprint(config: AgentConfig, input: unknown, version: string | undefined): string {
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (behaviour.has(key)) continue;
    const plain = plainOf(value, 0, new Set());
    if (plain !== undefined) settings[key] = plain;
  }
  const described = {
    version: version ?? null,
    model: typeof config.model?.name === 'string' ? config.model.name : null,
    tools: (config.tools ?? []).map((tool) => ({
      name: tool.name,
      description: tool.description,
      input: tool.inputJsonSchema,
      effect: tool.effect,
      autonomy: tool.autonomy,
      timeoutMs: tool.timeoutMs ?? null,
      maxResultTokens: tool.maxResultTokens ?? null,
      trustedOutput: tool.trustedOutput,
    })),
    settings,
    input: plainOf(input, 0, new Set()) ?? null,
  };
  return cyrb53(canonicalJson(described));
}
