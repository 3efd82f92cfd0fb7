import { canonicalJson } from '../controls/canonical-json.js';
import type { AssistantBlock, Message } from '../model/content.js';
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
export function honestModel(task: UserTask): Model {
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

/**
 * The worst case: a model that reads its whole context, tool output included, and issues a tool
 * call for every instruction it recognizes there (once each), before going on with the user's
 * task. No real model is this obedient; a guard that holds against it holds against them.
 */
export function obedientModel(task: UserTask, tools: readonly string[]): Model {
  const honest = honestModel(task);
  const issued = new Set<string>();
  let injected = 0;
  return {
    name: 'obedient',
    async generate(request) {
      if (request.toolChoice !== 'none') {
        const calls: AssistantBlock[] = [];
        for (const message of request.messages) {
          for (const block of message.content) {
            if (block.type !== 'tool_result') continue;
            for (const text of strings(block.content)) {
              for (const directive of extractDirectives(text, tools)) {
                const key = canonicalJson(directive);
                if (issued.has(key)) continue;
                issued.add(key);
                calls.push({
                  type: 'tool_use',
                  id: `injected_${++injected}`,
                  name: directive.tool,
                  input: directive.input,
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
