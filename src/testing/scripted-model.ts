import { ReinsError } from '../errors/reins-error.js';
import type { AssistantBlock, AssistantMessage } from '../model/content.js';
import type { Model, ModelRequest, ModelResponse, StopReason, Usage } from '../model/model.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';

/** A tool call in a scripted turn. */
export interface ScriptedToolCall {
  name: string;
  /** The parsed arguments. */
  input?: unknown;
  /** Raw argument text, for a call whose arguments are not valid JSON. */
  inputText?: string;
  /** @default `call_<turn>_<index>` */
  id?: string;
}

/** One scripted model turn. */
export interface ScriptedTurn {
  /** What the model says: its reasoning beside tool calls, or its answer. */
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** @default 'tool_use' with tool calls, else 'end_turn' */
  stopReason?: StopReason;
  /** Overrides the counted usage (fields left out are counted). */
  usage?: Partial<Usage>;
  model?: string;
  /** Throw this instead of answering. */
  throws?: unknown;
}

/** A turn, or a function that builds one (or a whole response) from the request. */
export type ScriptStep =
  | ScriptedTurn
  | ((
      request: ModelRequest,
      turn: number,
    ) => ScriptedTurn | ModelResponse | Promise<ScriptedTurn | ModelResponse>);

export interface ScriptedModelOptions {
  /** @default 'scripted' */
  name?: string;
  /** Counts usage with the same estimator the loop uses. @default approxTokenEstimator */
  estimator?: TokenEstimator;
  /** Keep a copy of every request in `calls`. Turn off for very long runs. @default true */
  recordCalls?: boolean;
}

/** A model that plays a script and records every request it received. */
export interface ScriptedModel extends Model {
  /** Every request, with the messages copied as they were at call time. */
  readonly calls: ModelRequest[];
  /** Turns not played yet. */
  readonly remaining: number;
  /** Calls that arrived after the script ran out. */
  readonly unexpectedCalls: number;
  /** Throws unless every turn was played and no call came after. */
  assertDone(): void;
}

/**
 * A deterministic model for tests and offline demos. Usage comes from the same token estimator the
 * loop uses, so budgets behave as they would against a provider. A call beyond the script throws a
 * `ReinsError` (reason `script_exhausted`), and `assertDone()` catches unused turns.
 *
 * @example
 * const model = scriptedModel([
 *   { text: 'Checking health.', toolCalls: [{ name: 'get_service_health', input: { service: 'checkout' } }] },
 *   { text: 'Checkout is degraded.' },
 * ]);
 */
export function scriptedModel(
  script: readonly ScriptStep[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const counter = new PrefillCounter(options.estimator ?? approxTokenEstimator);
  const calls: ModelRequest[] = [];
  let played = 0;
  let unexpected = 0;
  const name = options.name ?? 'scripted';

  return {
    name,
    calls,
    get remaining() {
      return script.length - played;
    },
    get unexpectedCalls() {
      return unexpected;
    },
    assertDone() {
      if (unexpected > 0)
        throw new ReinsError(
          'script_exhausted',
          `scriptedModel: ${unexpected} call(s) beyond the ${script.length}-turn script`,
        );
      if (played < script.length)
        throw new ReinsError(
          'script_unused',
          `scriptedModel: ${script.length - played} of ${script.length} scripted turns were never played`,
        );
    },
    async generate(request) {
      if (options.recordCalls !== false) calls.push({ ...request, messages: [...request.messages] });
      if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
      const index = played;
      const step = script[index];
      if (step === undefined) {
        unexpected++;
        throw new ReinsError(
          'script_exhausted',
          `scriptedModel: call ${index + 1} but the script has ${script.length} turn(s)`,
        );
      }
      played++;
      const produced = typeof step === 'function' ? await step(request, index) : step;
      if ('content' in produced && 'stopReason' in produced) return produced;
      const turn = produced as ScriptedTurn;
      if (turn.throws !== undefined) throw turn.throws;
      const content: AssistantBlock[] = [];
      if (turn.text !== undefined && turn.text !== '') content.push({ type: 'text', text: turn.text });
      (turn.toolCalls ?? []).forEach((call, j) => {
        const block: AssistantBlock = {
          type: 'tool_use',
          id: call.id ?? `call_${index + 1}_${j + 1}`,
          name: call.name,
          input: call.input,
        };
        if (call.inputText !== undefined) block.inputText = call.inputText;
        content.push(block);
      });
      const assistant: AssistantMessage = { role: 'assistant', content };
      const usage: Usage = {
        inputTokens: turn.usage?.inputTokens ?? counter.request(request),
        outputTokens: turn.usage?.outputTokens ?? counter.message(assistant),
        cacheReadTokens: turn.usage?.cacheReadTokens ?? 0,
        cacheWriteTokens: turn.usage?.cacheWriteTokens ?? 0,
      };
      const response: ModelResponse = {
        content,
        stopReason: turn.stopReason ?? ((turn.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn'),
        usage,
        model: turn.model ?? name,
      };
      return response;
    },
  };
}
