import type { ToolUseBlock } from '../../model/content.js';
import { assistantBlockTypes } from '../../model/content.js';
import type { ModelResponse, Usage } from '../../model/model.js';
import type { LoopState } from '../loop-state.js';
import type { Outcome, UnexecutedCall } from '../outcome.js';
import { blockProblem } from '../run-state.js';
import type { ModelTurn } from './call-model.js';

/** What the response means for the run: it ended, it goes on to the next call, or it asks for tools. */
export type Reading = { ends: Outcome } | { continues: true } | { tools: true };

/**
 * Read the stop reason: cut off → `truncated`; refused; context exceeded; at the final-answer call →
 * `step_limit` with its text; no tool call → `answered` (or `pause_turn` → next call); the give-up
 * tool → `gave_up`; calls proposed at the limit with `onStepLimit: 'stop'` → `step_limit`, never
 * run blind.
 */
export function readResponse(state: LoopState, step: number, final: boolean, turn: ModelTurn): Reading {
  const { response, calls, text } = turn;
  const { limits } = state.setup;
  if (response.stopReason === 'max_tokens' || response.stopReason === 'interrupted')
    return ended(state, step, {
      kind: 'truncated',
      block: calls.length > 0 ? 'tool_use' : 'text',
      text,
      unexecutedCalls: calls.map(unexecuted),
    });
  if (response.stopReason === 'refusal') return ended(state, step, { kind: 'refused', text });
  if (response.stopReason === 'context_window_exceeded') {
    const message = `the provider refused a prefill of about ${turn.prefillTokens} tokens`;
    return {
      ends: { kind: 'hard_error', source: 'model', error: { name: 'ContextWindowExceeded', message } },
    };
  }
  if (final) return ended(state, step, stepLimit(state, turn));
  if (calls.length === 0) {
    state.completedSteps = step;
    if (response.stopReason === 'pause_turn') return continues;
    if (text.trim() === '') {
      const message = `the model returned no text and no tool call (stop reason ${response.stopReason})`;
      return ended(state, step, {
        kind: 'hard_error',
        source: 'empty_response',
        error: { name: 'EmptyResponse', message },
      });
    }
    return ended(state, step, { kind: 'answered', text });
  }
  const giveUp = limits.giveUpTool === null ? undefined : giveUpCall(calls, limits.giveUpTool);
  if (giveUp) {
    const reason = (giveUp.input as { reason?: unknown } | undefined)?.reason;
    return ended(state, step, {
      kind: 'gave_up',
      reason: typeof reason === 'string' && reason !== '' ? reason : text || 'no reason given',
    });
  }
  // onStepLimit 'stop': the calls proposed at the limit would run blind (the model never sees their results).
  if (step >= limits.maxSteps) return ended(state, step, stepLimit(state, turn));
  return tools;
}

// The two readings that carry nothing, made once (a reading per step otherwise).
const continues: Reading = Object.freeze({ continues: true as const });
const tools: Reading = Object.freeze({ tools: true as const });

/** The run ends with this outcome, and the step counts as completed. */
function ended(state: LoopState, step: number, outcome: Outcome): Reading {
  state.completedSteps = step;
  return { ends: outcome };
}

function stepLimit(state: LoopState, { calls, text }: ModelTurn): Outcome {
  return {
    kind: 'step_limit',
    limit: state.setup.limits.maxSteps,
    finalText: text === '' ? undefined : text,
    unexecutedCalls: calls.map(unexecuted),
  };
}

/** The first call to the give-up tool (a loop, not `find`: no closure per step). */
function giveUpCall(calls: readonly ToolUseBlock[], giveUpTool: string): ToolUseBlock | undefined {
  for (let i = 0; i < calls.length; i++) if ((calls[i] as ToolUseBlock).name === giveUpTool) return calls[i];
  return undefined;
}

export function unexecuted(call: ToolUseBlock): UnexecutedCall {
  return { callId: call.id, tool: call.name, input: call.input ?? call.inputText };
}

/** No provider bills more tokens than this in one call; larger counts are not usage. */
const maxTokenCount = 1e12;

export function validUsage(usage: Partial<Usage> | undefined): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const count = (value: unknown) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= maxTokenCount
      ? value
      : undefined;
  const inputTokens = count(usage.inputTokens);
  const outputTokens = count(usage.outputTokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const valid: Usage = {
    inputTokens,
    outputTokens,
    cacheReadTokens: count(usage.cacheReadTokens) ?? 0,
    cacheWriteTokens: count(usage.cacheWriteTokens) ?? 0,
  };
  const reasoning = count(usage.reasoningTokens);
  if (reasoning !== undefined) valid.reasoningTokens = Math.min(reasoning, outputTokens);
  return valid;
}

/** The deepest tool input the loop accepts from a model; JSON from a provider is never near it. */
const maxInputDepth = 512;

/** Why a response cannot be read, or undefined when it can. */
export function malformed(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null) return 'the model returned no response object';
  const { content, stopReason } = response as Partial<ModelResponse>;
  if (!Array.isArray(content)) return 'response.content is not an array';
  if (typeof stopReason !== 'string') return 'response.stopReason is missing';
  // Most responses hold one call or none: the set of ids is made at the second call.
  let firstId: string | undefined;
  let ids: Set<string> | undefined;
  for (const block of content as unknown[]) {
    const typed = block as { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown };
    if (typed?.type === 'text' && typeof typed.text === 'string') continue;
    if (typed?.type === 'tool_use' && typeof typed.id === 'string' && typeof typed.name === 'string') {
      // Two calls under one id cannot both be answered: the provider would reject the results
      // after the side effects happened. Nothing runs.
      if (firstId === undefined) firstId = typed.id;
      else {
        ids ??= new Set([firstId]);
        if (ids.has(typed.id))
          return `response.content holds two tool calls with the id ${preview(typed.id)}`;
        ids.add(typed.id);
      }
      const problem = jsonProblem(typed.input, 0, undefined);
      if (problem) return `response.content holds a tool call whose input ${problem}`;
      continue;
    }
    if (typeof typed?.type === 'string' && assistantBlockTypes.has(typed.type)) {
      // The same check a checkpoint's blocks get, so the loop never keeps what it cannot reload.
      const shape = blockProblem(block, 'assistant');
      if (shape) return `response.content holds a ${typed.type} block whose ${shape.replace(/^\./, '')}`;
      const problem = jsonProblem(block, 0, undefined);
      if (problem) return `response.content holds a ${typed.type} block that ${problem}`;
      continue;
    }
    return `response.content holds a block the loop cannot read: ${preview(block)}`;
  }
  return undefined;
}

/** Circular or too deeply nested input would break every control that serializes it. */
function jsonProblem(value: unknown, depth: number, ancestors: Set<object> | undefined): string | undefined {
  if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function')
    return `holds a ${typeof value}, which is not JSON`;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= maxInputDepth) return `is nested deeper than ${maxInputDepth} levels`;
  if (ancestors?.has(value)) return 'is circular';
  // The path from the root is a set made at the first nested object: a flat input (most tool
  // inputs) allocates nothing to be checked.
  let path = ancestors;
  let onPath = false;
  const members = Array.isArray(value) ? value : Object.values(value);
  for (let i = 0; i < members.length; i++) {
    const member: unknown = members[i];
    if (member !== null && typeof member === 'object' && !onPath) {
      path ??= new Set();
      path.add(value);
      onPath = true;
    }
    const problem = jsonProblem(member, depth + 1, path);
    if (problem) return problem;
  }
  if (onPath) path?.delete(value);
  return undefined;
}

function preview(block: unknown): string {
  try {
    return JSON.stringify(block)?.slice(0, 200) ?? String(block);
  } catch {
    return '[unserializable block]';
  }
}
