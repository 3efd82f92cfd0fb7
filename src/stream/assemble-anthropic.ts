import type { AssistantBlock, JsonValue } from '../model/content.js';
import type { ModelResponse, StopReason } from '../model/model.js';
import { type AnthropicUsage, isFields, mergeUsage, usageFrom, usageOf } from './anthropic-usage.js';
import { createPartialJsonParser, type PartialJsonParser } from './parse-partial-json.js';
import { rethrowUnlessDropped, StreamError } from './stream-error.js';

export type { AnthropicUsage } from './anthropic-usage.js';

export { StreamError } from './stream-error.js';

type Fields = { [key: string]: unknown };

/**
 * The Anthropic Messages stream events reins reads (the SDK's `MessageStreamEvent`, structurally).
 * Block and delta types reins does not know are kept as they come, never an error.
 */
export type AnthropicStreamEvent =
  | {
      type: 'message_start';
      message: {
        id?: string;
        model?: string;
        usage?: AnthropicUsage;
        content?: Fields[];
        stop_reason?: string | null;
        container?: unknown;
      };
    }
  | { type: 'content_block_start'; index: number; content_block: { type: string; [key: string]: unknown } }
  | { type: 'content_block_delta'; index: number; delta: { type: string; [key: string]: unknown } }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason?: string | null; [key: string]: unknown };
      usage?: Partial<AnthropicUsage> | null;
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

/** A tool call's argument as it fills in, for display. */
export interface ToolInputProgress {
  callId: string;
  name: string;
  /** The display value so far (never executable). */
  display: ReturnType<PartialJsonParser['snapshot']>;
}

export interface AssembleOptions {
  onText?: (delta: string) => void;
  onToolInput?: (progress: ToolInputProgress) => void;
}

const stopReasons: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
  pause_turn: 'pause_turn',
  model_context_window_exceeded: 'context_window_exceeded',
};

/** Block types whose input streams as `input_json_delta` (the SDK tracks the same ones, and MCP's). */
const jsonInputTypes = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** One content block as it fills in: the wire object, and the argument text for tool calls. */
interface Slot {
  wire: Fields;
  json?: { parser: PartialJsonParser; text: string[]; length: number };
  closed: boolean;
  /** The argument text was complete JSON-wise but not valid (`malformed`) or cut (`truncated`). */
  problem?: 'malformed' | 'truncated';
}

/** The message being read. A second `message_start` before `message_stop` replaces it. */
interface Reading {
  id?: string;
  model?: string;
  /** By the provider's index: a Map, so a hostile index (4e9) costs one entry, not a sparse walk. */
  slots: Map<number, Slot>;
  usage: AnthropicUsage;
  /** The prefill `message_start` reported: the first internal iteration's. */
  startPrefill: number;
  /** The code-execution container the message ran in (`message_start`, updated by `message_delta`). */
  container?: Fields;
  stopReason?: string;
  started: boolean;
  stopped: boolean;
}

const fresh = (): Reading => ({
  slots: new Map(),
  usage: {},
  startPrefill: 0,
  started: false,
  stopped: false,
});

/**
 * Turns an Anthropic Messages stream into the loop's response, agreeing with the SDK's own
 * accumulator (`MessageStream.finalMessage()`) on text, tool calls, stop reason, usage, id and model
 * for every recorded stream in test/fixtures/provider-streams, except where the SDK is wrong:
 * - a tool block cut off mid-argument carries only its raw text (the SDK finalizes it into a
 *   shortened object that would run); the turn is `interrupted` (or `max_tokens`), nothing runs;
 * - a second `message_start` before `message_stop` (a proxy splicing a retried stream) starts the
 *   message over instead of failing the call; an exact duplicate is ignored;
 * - when the server ran several iterations, usage is what was billed (the sum over iterations,
 *   compaction included) and `contextTokens` the last iteration's prefill plus its output.
 * Thinking (with its signature), redacted thinking, citations and every server-tool block come back
 * as typed blocks that round-trip unchanged. An `error` event is a `StreamError` for the caller to
 * classify and retry, even after partial output.
 */
export async function assembleAnthropicStream(
  events: AsyncIterable<AnthropicStreamEvent>,
  options: AssembleOptions = {},
): Promise<ModelResponse> {
  let reading = fresh();
  let received = 0;
  try {
    for await (const event of events) {
      received++;
      reading = apply(reading, event, options);
    }
  } catch (error) {
    // A connection dropped mid-stream: what arrived is kept and labeled, nothing runs. An error
    // the provider sent, or a failure before anything arrived, is the caller's to retry.
    rethrowUnlessDropped(error, received);
    reading.stopped = false;
  }
  return responseOf(reading);
}

function apply(reading: Reading, event: AnthropicStreamEvent, options: AssembleOptions): Reading {
  switch (event.type) {
    case 'message_start':
      return start(reading, event.message);
    case 'content_block_start':
      if (Number.isSafeInteger(event.index)) reading.slots.set(event.index, openSlot(event.content_block));
      fallback(reading, event.content_block);
      return reading;
    case 'content_block_delta':
      delta(reading.slots.get(event.index), event.delta, options);
      return reading;
    case 'content_block_stop':
      close(reading.slots.get(event.index));
      return reading;
    case 'message_delta':
      if (event.delta?.stop_reason) reading.stopReason = event.delta.stop_reason;
      if (isFields(event.delta?.['container'])) reading.container = event.delta['container'];
      mergeUsage(reading.usage, event.usage ?? {});
      return reading;
    case 'message_stop':
      reading.stopped = true;
      return reading;
    case 'error':
      throw new StreamError(event.error?.type ?? 'error', event.error?.message ?? 'stream error', {
        body: event,
      });
    default:
      return reading;
  }
}

function start(
  reading: Reading,
  message: Extract<AnthropicStreamEvent, { type: 'message_start' }>['message'],
) {
  const duplicate =
    reading.started && !reading.stopped && reading.id === message.id && reading.slots.size === 0;
  if (duplicate) return reading;
  const next = fresh();
  next.started = true;
  if (message.id !== undefined) next.id = message.id;
  if (message.model !== undefined) next.model = message.model;
  if (isFields(message.container)) next.container = message.container;
  // A message that arrives whole (programmatic tool calling) carries its stop reason already.
  if (typeof message.stop_reason === 'string') next.stopReason = message.stop_reason;
  mergeUsage(next.usage, message.usage ?? {});
  const first = usageFrom(next.usage);
  next.startPrefill = first.inputTokens + first.cacheReadTokens + first.cacheWriteTokens;
  // Programmatic tool calling sends finished tool calls inside message_start.
  for (const block of message.content ?? [])
    next.slots.set(next.slots.size, { wire: { ...block }, closed: true });
  return next;
}

/** A `fallback` block names the model that served the rest of the response (as the SDK's beta accumulator reads it). */
function fallback(reading: Reading, block: { type: string; [key: string]: unknown }) {
  if (block.type !== 'fallback') return;
  const to = block['to'] as { model?: unknown } | undefined;
  if (typeof to?.model === 'string' && to.model !== '') reading.model = to.model;
}

function openSlot(block: { type: string; [key: string]: unknown }): Slot {
  const slot: Slot = { wire: { ...block }, closed: false };
  if (jsonInputTypes.has(block.type)) slot.json = { parser: createPartialJsonParser(), text: [], length: 0 };
  return slot;
}

function delta(
  slot: Slot | undefined,
  change: { type: string; [key: string]: unknown },
  options: AssembleOptions,
) {
  if (!slot) return;
  const wire = slot.wire;
  switch (change.type) {
    case 'text_delta':
      if (wire['type'] !== 'text' || typeof change['text'] !== 'string') return;
      wire['text'] = `${(wire['text'] as string | undefined) ?? ''}${change['text']}`;
      options.onText?.(change['text']);
      return;
    case 'citations_delta':
      if (wire['type'] !== 'text') return;
      wire['citations'] = [
        ...((wire['citations'] as unknown[] | null | undefined) ?? []),
        change['citation'],
      ];
      return;
    case 'thinking_delta':
      if (wire['type'] === 'thinking' && typeof change['thinking'] === 'string')
        wire['thinking'] = `${(wire['thinking'] as string | undefined) ?? ''}${change['thinking']}`;
      return;
    case 'signature_delta':
      if (wire['type'] === 'thinking') wire['signature'] = change['signature'];
      return;
    case 'input_json_delta':
      if (slot.json && typeof change['partial_json'] === 'string')
        argumentDelta(slot, change['partial_json'], options);
      return;
    case 'compaction_delta':
      // The delta carries the block's final value (null content: the compaction failed), as the
      // SDK's beta accumulator reads it; assigned, not appended.
      if (wire['type'] !== 'compaction') return;
      wire['content'] = change['content'] ?? null;
      if ('encrypted_content' in change) wire['encrypted_content'] = change['encrypted_content'];
      return;
    default:
      // Anything newer: kept on the block as the provider sent it.
      mergeUnknownDelta(wire, change);
  }
}

/** An unknown delta's string fields extend the block's fields of the same name; others replace them. */
function mergeUnknownDelta(wire: Fields, change: Fields) {
  for (const [key, value] of Object.entries(change)) {
    if (key === 'type') continue;
    const before = wire[key];
    wire[key] = typeof value === 'string' && typeof before === 'string' ? before + value : value;
  }
}

function argumentDelta(slot: Slot, piece: string, options: AssembleOptions) {
  const json = slot.json as NonNullable<Slot['json']>;
  if (piece === '') return;
  json.text.push(piece);
  json.length += piece.length;
  json.parser.push(piece);
  if (options.onToolInput && slot.wire['type'] === 'tool_use')
    options.onToolInput({
      callId: String(slot.wire['id']),
      name: String(slot.wire['name']),
      display: json.parser.snapshot(),
    });
}

function close(slot: Slot | undefined) {
  if (!slot || slot.closed) return;
  slot.closed = true;
  const json = slot.json;
  // No argument text: the input is what content_block_start gave (`{}` for a tool without
  // arguments, or the whole input when the provider sent it at once).
  if (!json || json.length === 0) return;
  const result = json.parser.finish();
  if (result.status === 'complete') slot.wire['input'] = result.value;
  else slot.problem = result.status === 'truncated' ? 'truncated' : 'malformed';
}

function blockOf(slot: Slot): AssistantBlock {
  const wire = slot.wire;
  switch (wire['type']) {
    case 'text': {
      const block: AssistantBlock = {
        type: 'text',
        text: typeof wire['text'] === 'string' ? wire['text'] : '',
      };
      const citations = wire['citations'];
      if (Array.isArray(citations) && citations.length > 0) block.citations = citations as JsonValue[];
      return block;
    }
    case 'tool_use':
      return toolUseOf(slot);
    case 'thinking': {
      const block: AssistantBlock = {
        type: 'thinking',
        thinking: typeof wire['thinking'] === 'string' ? wire['thinking'] : '',
        provider: 'anthropic',
      };
      if (typeof wire['signature'] === 'string') block.signature = wire['signature'];
      return block;
    }
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: String(wire['data'] ?? ''), provider: 'anthropic' };
    default:
      if (slot.problem) wire['input'] = {};
      return {
        type: 'provider',
        provider: 'anthropic',
        kind: String(wire['type']),
        raw: wire as Record<string, JsonValue>,
      };
  }
}

function toolUseOf(slot: Slot): AssistantBlock {
  const { type: _type, id, name, input, ...rest } = slot.wire;
  const block: AssistantBlock = { type: 'tool_use', id: String(id), name: String(name), input };
  const cut = !slot.closed || slot.problem !== undefined;
  if (cut) {
    block.input = undefined;
    block.inputText = slot.json ? slot.json.text.join('') : '';
  } else if (input === undefined) block.input = {};
  // Fields such as `caller` (programmatic tool calling) go back with the call.
  if (Object.keys(rest).length > 0) block.providerData = rest as Record<string, JsonValue>;
  return block;
}

function responseOf(reading: Reading): ModelResponse {
  const content: AssistantBlock[] = [];
  let cutOff = false;
  for (const at of [...reading.slots.keys()].sort((a, b) => a - b)) {
    const slot = reading.slots.get(at) as Slot;
    if (!slot) continue;
    const isCall = jsonInputTypes.has(String(slot.wire['type']));
    if (isCall && (!slot.closed || slot.problem === 'truncated')) cutOff = true;
    content.push(blockOf(slot));
  }
  const stopReason: StopReason = !reading.stopped
    ? 'interrupted'
    : cutOff && reading.stopReason !== 'max_tokens'
      ? 'interrupted'
      : reading.stopReason === undefined
        ? 'other'
        : (stopReasons[reading.stopReason] ?? 'other');
  // The container goes with the transcript, so the next request can name it (programmatic tool
  // calling needs the same container); the adapter sends it as `container`, not as a block.
  if (reading.container)
    content.push({
      type: 'provider',
      provider: 'anthropic',
      kind: 'container',
      raw: reading.container as Record<string, JsonValue>,
    });
  const response: ModelResponse = {
    content,
    stopReason,
    ...usageOf(reading.usage, reading.model, reading.startPrefill),
  };
  if (reading.id !== undefined) response.id = reading.id;
  if (reading.model !== undefined) response.model = reading.model;
  return response;
}
