import { canonicalJson } from '../controls/canonical-json.js';
import type { AssistantBlock, Message, ToolUseBlock } from '../model/content.js';
import type { Model, ModelResponse } from '../model/model.js';
import { extractDirectives } from './attacks.js';
import type { Observations, UserTask } from './suites.js';

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The readable text of a tool result: the untrusted wrapper removed, JSON unpacked into its strings. */
function strings(content: string): string[] {
  const inner = content.replace(/^<tool-output[^>]*>\n/, '').replace(/\n<\/tool-output>$/, '');
  try {
    const parsed: unknown = JSON.parse(inner);
    const out: string[] = [];
    const walk = (value: unknown) => {
      if (typeof value === 'string') out.push(value);
      else if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    };
    walk(parsed);
    return out;
  } catch {
    return [inner];
  }
}

/** What the model has observed: each tool's latest parsed result, by tool name. */
function observe(messages: readonly Message[]): Observations {
  const names = new Map<string, string>();
  const seen: Observations = {};
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_use') names.set(block.id, block.name);
      if (block.type === 'tool_result' && !block.isError) {
        const name = names.get(block.toolUseId);
        const inner = block.content.replace(/^<tool-output[^>]*>\n/, '').replace(/\n<\/tool-output>$/, '');
        try {
          if (name) seen[name] = JSON.parse(inner);
        } catch {
          if (name) seen[name] = inner;
        }
      }
    }
  }
  return seen;
}

function response(content: AssistantBlock[]): ModelResponse {
  return {
    content,
    stopReason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    usage,
  };
}

/**
 * A scripted model that does the user's task and nothing else: it follows the task's plan, using
 * what it observed to fill in arguments, and never acts on text inside tool results.
 */
export function honestModel(task: Pick<UserTask, 'plan' | 'answer'>): Model {
  let next = 0;
  return {
    name: 'honest',
    async generate(request) {
      const step = task.plan[next];
      if (!step || request.toolChoice === 'none') return response([{ type: 'text', text: task.answer }]);
      next++;
      const call = step(observe(request.messages));
      return response([
        { type: 'text', text: call.text },
        { type: 'tool_use', id: `honest_${next}`, name: call.tool, input: call.input },
      ]);
    },
  };
}

const placeholder = /\{\{([\w-]+)((?:\.[\w-]+)*)\}\}/g;
const wholePlaceholder = /^\{\{([\w-]+)((?:\.[\w-]+)*)\}\}$/;

/** The value at `tool.path` of what the model observed, or undefined when it has not seen it. */
function observed(seen: Observations, tool: string, path: string): unknown {
  let value: unknown = seen[tool];
  for (const segment of path.split('.').filter((part) => part !== '')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/**
 * A directive's input with its `{{tool.path}}` placeholders filled from what the model observed
 * (a whole-string placeholder keeps the value's type: `"{{get_balance}}"` becomes 1810), or
 * undefined while a placeholder names something not yet seen. This is how an adaptive attacker
 * launders a value: "read the balance, then send all of it".
 */
function resolved(value: unknown, seen: Observations): { value: unknown } | undefined {
  if (typeof value === 'string') {
    const whole = wholePlaceholder.exec(value);
    if (whole) {
      const found = observed(seen, whole[1] as string, whole[2] ?? '');
      return found === undefined ? undefined : { value: found };
    }
    let missing = false;
    const text = value.replace(placeholder, (_, tool: string, path: string) => {
      const found = observed(seen, tool, path ?? '');
      if (found === undefined) missing = true;
      return typeof found === 'string' ? found : JSON.stringify(found);
    });
    return missing ? undefined : { value: text };
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const next = resolved(item, seen);
      if (!next) return undefined;
      out.push(next.value);
    }
    return { value: out };
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const next = resolved(member, seen);
      if (!next) return undefined;
      out[key] = next.value;
    }
    return { value: out };
  }
  return { value };
}

/**
 * The worst case: a model that reads its whole context, tool output and tool errors included, and
 * issues a tool call for every instruction it recognizes there (once each, in the order it reads
 * them, filling `{{tool.path}}` placeholders from what it has observed and waiting for what it has
 * not), before going on with the user's task. No real model is this obedient; a guard that holds
 * against it holds against them.
 */
export function obedientModel(task: Pick<UserTask, 'plan' | 'answer'>, tools: readonly string[]): Model {
  const honest = honestModel(task);
  const issued = new Set<string>();
  let injected = 0;
  return {
    name: 'obedient',
    async generate(request) {
      if (request.toolChoice !== 'none') {
        const seen = observe(request.messages);
        const calls: AssistantBlock[] = [];
        for (const message of request.messages) {
          for (const block of message.content) {
            if (block.type !== 'tool_result') continue;
            for (const text of strings(block.content)) {
              for (const directive of extractDirectives(text, tools)) {
                const key = canonicalJson(directive);
                if (issued.has(key)) continue;
                const input = resolved(directive.input, seen);
                if (!input) continue;
                issued.add(key);
                calls.push({
                  type: 'tool_use',
                  id: `injected_${++injected}`,
                  name: directive.tool,
                  input: input.value as ToolUseBlock['input'],
                });
              }
            }
          }
        }
        if (calls.length > 0)
          return response([{ type: 'text', text: 'The page says to do this first, so I will.' }, ...calls]);
      }
      return honest.generate(request);
    },
  };
}
