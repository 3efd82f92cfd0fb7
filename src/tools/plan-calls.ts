import type { PlannedCall } from '../controls/taint-policy.js';
import { TrustedText } from '../controls/trusted-text.js';
import type { Message } from '../model/content.js';
import type { Model } from '../model/model.js';
import type { AnyTool } from './define-tool.js';
import { InputFields } from './input-fields.js';

/** What {@link planCalls} returns: a plan, or why the planner's answer could not be one. */
export type PlanResult =
  | { kind: 'planned'; plan: PlannedCall[]; dropped: string[] }
  | { kind: 'invalid'; reason: string; text: string };

const instructions = (tools: readonly AnyTool[]) =>
  'You plan the privileged actions an assistant may take for the request below. You see only the ' +
  "user's request and the tools; you never see tool output. List each call the request asks for, " +
  'with only the argument values the request states word for word; leave out any argument whose ' +
  'value the assistant would have to look up. Answer with JSON only: ' +
  '{"calls":[{"tool":"<name>","arguments":{"<field>":<value>}}]}. Answer {"calls":[]} when the ' +
  'request asks for no such action.\n\nTools:\n' +
  tools
    .map(
      (tool) => `- ${tool.name}: ${tool.description} Input schema: ${JSON.stringify(tool.inputJsonSchema)}`,
    )
    .join('\n');

/** The first JSON object in a text (a model may wrap it in prose or a code fence). */
function firstObject(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

/**
 * Plan-then-execute: one model call that sees only the user's request and the privileged tools
 * (no tool output, no tools to call) returns the calls the request asks for, for `taint.plan`.
 * The planner is itself a model and may be wrong, so its answer is checked: a tool it names must
 * be one of `tools`, an argument must name a field, and a value must be a whole token of the
 * request — a value the planner invented is dropped (and listed), which leaves that argument to the
 * tool's policy. The planner cannot be steered by injected text: it never sees any.
 *
 * @example
 * const planned = await planCalls({ model, request: 'Pay 50 to GB29NWBK60161331926819.', tools: [sendMoney] });
 * const taint = planned.kind === 'planned' ? { plan: planned.plan } : { plan: [] };
 */
export async function planCalls(options: {
  model: Model;
  request: string;
  /** The run's privileged tools. */
  tools: readonly AnyTool[];
  signal?: AbortSignal;
}): Promise<PlanResult> {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: options.request }] }];
  const response = await options.model.generate({
    system: instructions(options.tools),
    messages,
    tools: [],
    toolChoice: 'none',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = response.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  const answer = firstObject(text) as { calls?: unknown } | undefined;
  if (!answer || !Array.isArray(answer.calls))
    return { kind: 'invalid', reason: 'the planner did not answer {"calls":[...]}', text };
  const request = new TrustedText();
  request.note(options.request);
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const plan: PlannedCall[] = [];
  const dropped: string[] = [];
  for (const [index, entry] of answer.calls.entries()) {
    const { tool: name, arguments: args } = (entry ?? {}) as { tool?: unknown; arguments?: unknown };
    const tool = typeof name === 'string' ? byName.get(name) : undefined;
    if (!tool) {
      dropped.push(`calls.${index}: no tool ${String(name)}`);
      continue;
    }
    const fields = new InputFields(tool.inputJsonSchema);
    const kept: Record<string, unknown> = {};
    for (const [path, value] of Object.entries(args !== null && typeof args === 'object' ? args : {})) {
      const stated =
        typeof value === 'number'
          ? request.hasNumber(value)
          : typeof value === 'string' && value.trim() !== '' && request.has(value);
      if (fields.has(path) && !path.includes('*') && stated) kept[path] = value;
      else dropped.push(`calls.${index}.arguments.${path}`);
    }
    plan.push(Object.keys(kept).length > 0 ? { tool: tool.name, arguments: kept } : { tool: tool.name });
  }
  return { kind: 'planned', plan, dropped };
}
