import type { ModelResponse } from '../model/model.js';
import type { AssembleOptions } from './assemble-anthropic.js';
import { createPartialJsonParser, type PartialJsonParser } from './parse-partial-json.js';
import { blockOf, stopReasonOf, usageOf } from './responses-output.js';
import { rethrowUnlessDropped, StreamError, statusOfErrorType } from './stream-error.js';

type Fields = { [key: string]: unknown };

/**
 * An OpenAI Responses stream event as reins reads it: the SDK's `ResponseStreamEvent` (or any
 * object with a `type`) is accepted as it is. Types reins does not know are ignored.
 */
export interface OpenAIResponsesStreamEvent {
  type?: string;
}

/** An event with its fields readable. */
type StreamEvent = OpenAIResponsesStreamEvent & Fields;

/** An output item of a response (`message`, `function_call`, `reasoning`, `web_search_call` …). */
export interface OpenAIResponsesItem {
  type: string;
  [field: string]: unknown;
}

/** The response object carried by `response.created`, `.completed`, `.incomplete` and `.failed`. */
export interface OpenAIResponsesResponse {
  id?: string;
  model?: string;
  status?: string | null;
  output?: OpenAIResponsesItem[] | null;
  incomplete_details?: { reason?: string | null } | null;
  error?: { code?: string | null; message?: string | null } | null;
  usage?: {
    input_tokens?: number | null;
    output_tokens?: number | null;
    input_tokens_details?: { cached_tokens?: number | null } | null;
    output_tokens_details?: { reasoning_tokens?: number | null } | null;
  } | null;
}

/** One output item as its events arrive; `item` is rebuilt from the deltas until its `done` event. */
interface StreamedItem {
  item: OpenAIResponsesItem;
  parser?: PartialJsonParser;
}

interface ResponsesState {
  items: Map<number, StreamedItem>;
  started?: OpenAIResponsesResponse;
  /** The `response.completed` or `response.incomplete` payload: the provider's own final answer. */
  final?: OpenAIResponsesResponse;
}

/**
 * Turns an OpenAI Responses stream into the loop's response. Output items keep their order:
 * `message` parts become text (annotations as citations, refusals as text with stop reason
 * `refusal`), `function_call` and `custom_tool_call` become tool calls, `reasoning` becomes a
 * thinking block whose `providerData` is the item itself (sent back unchanged), and every other item
 * (web search, MCP, code interpreter, compaction, anything new) is a `provider` block kept verbatim.
 *
 * The final response's `output` is the truth when it has any (it is what the SDK's `finalResponse()`
 * returns, and it can differ from the streamed items: rotated ids, re-encrypted content); the streamed
 * items stand in when it is empty or never came. A stream that ends without `response.completed` or
 * `response.incomplete` is `interrupted`. An `error` event or `response.failed` throws a
 * {@link StreamError} with the provider's code and message, even after partial output.
 *
 * @example
 * const stream = await client.responses.create({ model: 'gpt-5-mini', input: 'Hi', stream: true });
 * const response = await assembleOpenAIResponsesStream(stream);
 */
export async function assembleOpenAIResponsesStream(
  events: AsyncIterable<OpenAIResponsesStreamEvent>,
  options: AssembleOptions = {},
): Promise<ModelResponse> {
  const state: ResponsesState = { items: new Map() };
  let received = 0;
  try {
    for await (const event of events) {
      received++;
      applyEvent(state, event as StreamEvent, options);
    }
  } catch (error) {
    // A dropped connection keeps what arrived (a missing final event labels it); a provider
    // error (the SDK's `APIError` for an `error` event as a StreamError), a garbled frame, or a
    // failure before anything arrived, is the caller's to see.
    rethrowUnlessDropped(error, received, (body) => openAIResponsesError(body));
  }
  return responseOf(state);
}

function applyEvent(state: ResponsesState, event: StreamEvent, options: AssembleOptions): void {
  switch (event.type) {
    case 'response.created':
    case 'response.in_progress':
    case 'response.queued':
      state.started = event['response'] as OpenAIResponsesResponse;
      return;
    case 'response.completed':
    case 'response.incomplete':
      state.final = event['response'] as OpenAIResponsesResponse;
      return;
    case 'response.failed':
      throw failedError(event['response'] as OpenAIResponsesResponse | undefined);
    case 'error':
      throw errorEventError(event);
    case 'response.output_item.added':
      addItem(state, event);
      return;
    case 'response.output_item.done':
      finishItem(state, event);
      return;
    default:
      applyItemDelta(state, event, options);
  }
}

function addItem(state: ResponsesState, event: StreamEvent): void {
  const item = structuredClone(event['item']) as OpenAIResponsesItem;
  if (item.type === 'message' && !Array.isArray(item['content'])) item['content'] = [];
  if (item.type === 'function_call') item['arguments'] = '';
  if (item.type === 'custom_tool_call') item['input'] = '';
  const streamed: StreamedItem = { item };
  if (item.type === 'function_call') streamed.parser = createPartialJsonParser();
  state.items.set(event['output_index'] as number, streamed);
}

function finishItem(state: ResponsesState, event: StreamEvent): void {
  const index = event['output_index'] as number;
  const item = structuredClone(event['item']) as OpenAIResponsesItem;
  const streamed = state.items.get(index);
  if (streamed) streamed.item = item;
  else state.items.set(index, { item });
}

/** Deltas inside one item: text, refusals, annotations, arguments, custom input, reasoning summaries. */
function applyItemDelta(state: ResponsesState, event: StreamEvent, options: AssembleOptions): void {
  const streamed = state.items.get(event['output_index'] as number);
  if (!streamed) return;
  const { item } = streamed;
  switch (event.type) {
    case 'response.content_part.added':
    case 'response.content_part.done':
      if (item.type === 'message') setAt(item, 'content', event['content_index'], event['part']);
      return;
    case 'response.output_text.delta':
      options.onText?.(event['delta'] as string);
      appendAt(item, 'content', event['content_index'], 'text', event['delta'], 'output_text');
      return;
    case 'response.output_text.done':
      replaceAt(item, 'content', event['content_index'], 'text', event['text'], 'output_text');
      return;
    case 'response.output_text.annotation.added':
      addAnnotation(item, event);
      return;
    case 'response.refusal.delta':
      appendAt(item, 'content', event['content_index'], 'refusal', event['delta'], 'refusal');
      return;
    case 'response.refusal.done':
      replaceAt(item, 'content', event['content_index'], 'refusal', event['refusal'], 'refusal');
      return;
    case 'response.function_call_arguments.delta':
      appendArguments(streamed, event['delta'] as string, options);
      return;
    case 'response.function_call_arguments.done':
      if (item.type === 'function_call') item['arguments'] = event['arguments'];
      return;
    case 'response.custom_tool_call_input.delta':
      appendCustomInput(item, event['delta'] as string, options);
      return;
    case 'response.custom_tool_call_input.done':
      if (item.type === 'custom_tool_call') item['input'] = event['input'];
      return;
    default:
      applyReasoningDelta(item, event);
  }
}

function applyReasoningDelta(item: OpenAIResponsesItem, event: StreamEvent): void {
  if (item.type !== 'reasoning') return;
  switch (event.type) {
    case 'response.reasoning_summary_part.added':
    case 'response.reasoning_summary_part.done':
      setAt(item, 'summary', event['summary_index'], event['part']);
      return;
    case 'response.reasoning_summary_text.delta':
      appendAt(item, 'summary', event['summary_index'], 'text', event['delta'], 'summary_text');
      return;
    case 'response.reasoning_summary_text.done':
      replaceAt(item, 'summary', event['summary_index'], 'text', event['text'], 'summary_text');
      return;
    case 'response.reasoning_text.delta':
      appendAt(item, 'content', event['content_index'], 'text', event['delta'], 'reasoning_text');
      return;
    case 'response.reasoning_text.done':
      replaceAt(item, 'content', event['content_index'], 'text', event['text'], 'reasoning_text');
      return;
  }
}

function appendArguments(streamed: StreamedItem, delta: string, options: AssembleOptions): void {
  const { item, parser } = streamed;
  if (item.type !== 'function_call' || !parser || !delta) return;
  item['arguments'] = `${item['arguments'] ?? ''}${delta}`;
  parser.push(delta);
  options.onToolInput?.({
    callId: String(item['call_id']),
    name: String(item['name']),
    display: parser.snapshot(),
  });
}

function appendCustomInput(item: OpenAIResponsesItem, delta: string, options: AssembleOptions): void {
  if (item.type !== 'custom_tool_call' || !delta) return;
  const input = `${item['input'] ?? ''}${delta}`;
  item['input'] = input;
  // Freeform input is text, not JSON: the display is the text so far.
  options.onToolInput?.({ callId: String(item['call_id']), name: String(item['name']), display: input });
}

function addAnnotation(item: OpenAIResponsesItem, event: StreamEvent): void {
  const part = partAt(item, 'content', event['content_index'], 'output_text');
  if (!part) return;
  if (!Array.isArray(part['annotations'])) part['annotations'] = [];
  (part['annotations'] as unknown[])[event['annotation_index'] as number] = structuredClone(
    event['annotation'],
  );
}

/** The part at `index` of `item[list]`, created (as `type`) when its `added` event never came. */
function partAt(item: OpenAIResponsesItem, list: string, index: unknown, type?: string): Fields | undefined {
  if (typeof index !== 'number') return undefined;
  if (!Array.isArray(item[list])) item[list] = [];
  const parts = item[list] as Fields[];
  if (!parts[index] && type)
    parts[index] = type === 'output_text' ? { type, text: '', annotations: [] } : { type };
  return parts[index];
}

function setAt(item: OpenAIResponsesItem, list: string, index: unknown, part: unknown): void {
  if (typeof index !== 'number' || typeof part !== 'object' || part === null) return;
  partAt(item, list, index);
  (item[list] as Fields[])[index] = structuredClone(part) as Fields;
}

function appendAt(
  item: OpenAIResponsesItem,
  list: string,
  index: unknown,
  field: string,
  delta: unknown,
  type: string,
) {
  const part = partAt(item, list, index, type);
  if (part && typeof delta === 'string')
    part[field] = `${typeof part[field] === 'string' ? part[field] : ''}${delta}`;
}

function replaceAt(
  item: OpenAIResponsesItem,
  list: string,
  index: unknown,
  field: string,
  value: unknown,
  type: string,
) {
  const part = partAt(item, list, index, type);
  if (part && typeof value === 'string') part[field] = value;
}

function errorEventError(event: StreamEvent): StreamError {
  // The API sends `{ type: 'error', code, message }`; some recordings nest it as `{ error: {...} }`.
  const body = typeof event['error'] === 'object' && event['error'] !== null ? event['error'] : event;
  return openAIResponsesError(body as Fields);
}

function failedError(response: OpenAIResponsesResponse | undefined): StreamError {
  const error = response?.error ?? undefined;
  return openAIResponsesError({ type: 'response_failed', ...error }, error ?? response);
}

/**
 * The `StreamError` for an error the Responses API reported (an `error` event, a failed response):
 * its type is whichever of `code` and `type` names a known status, so `classifyError` can read it.
 */
export function openAIResponsesError(
  error: { code?: unknown; type?: unknown; message?: unknown },
  body: unknown = error,
): StreamError {
  const names = [error.code, error.type].filter(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  const type = names.find((value) => statusOfErrorType(value) !== undefined) ?? names[0] ?? 'error';
  return new StreamError(type, messageOf(error.message), { body });
}

const messageOf = (message: unknown) =>
  typeof message === 'string' && message !== ''
    ? message
    : 'the provider reported an error without a message';

function responseOf(state: ResponsesState): ModelResponse {
  const { final } = state;
  const finalItems = final?.output ?? [];
  const items =
    finalItems.length > 0 ? finalItems : [...state.items.values()].map((streamed) => streamed.item);
  const blocks = items.map(blockOf);
  const response: ModelResponse = {
    content: blocks.flatMap((block) => block.block),
    stopReason: stopReasonOf(final, blocks),
  };
  const usage = usageOf(final?.usage);
  if (usage) response.usage = usage;
  const id = final?.id || state.started?.id;
  const model = final?.model || state.started?.model;
  if (id) response.id = id;
  if (model) response.model = model;
  return response;
}
