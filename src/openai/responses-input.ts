/** reins messages as OpenAI Responses input items. */
import type OpenAI from 'openai';
import type {
  AssistantMessage,
  MediaBlock,
  Message,
  ToolResultBlock,
  UserMessage,
} from '../model/content.js';

type InputItem = OpenAI.Responses.ResponseInputItem;

/**
 * reins messages as Responses input items, in order: user content as one message, tool results as
 * `function_call_output` items, assistant text as assistant messages, tool calls as `function_call`
 * items, and OpenAI's own reasoning and provider items verbatim. Another provider's thinking and
 * provider blocks are left out: they mean nothing to OpenAI.
 */
export function toResponsesInput(
  messages: readonly Message[],
  customTools: ReadonlySet<string> = new Set(),
): InputItem[] {
  const customCalls = new Set<string>();
  for (const message of messages)
    if (message.role === 'assistant')
      for (const block of message.content)
        if (block.type === 'tool_use' && customTools.has(block.name)) customCalls.add(block.id);
  return messages.flatMap((message) =>
    message.role === 'user' ? userItems(message, customCalls) : assistantItems(message, customTools),
  );
}

function userItems(message: UserMessage, customCalls: ReadonlySet<string>): InputItem[] {
  const items: InputItem[] = [];
  const content: OpenAI.Responses.ResponseInputContent[] = [];
  for (const block of message.content) {
    if (block.type === 'tool_result') items.push(toolResultItem(block, customCalls));
    else if (block.type === 'text') content.push({ type: 'input_text', text: block.text });
    else content.push(mediaPart(block));
  }
  if (content.length > 0) items.push({ role: 'user', content });
  return items;
}

/**
 * A tool result; images and documents the tool returned go in the output list beside the text
 * (`function_call_output.output` accepts `input_text`, `input_image` and `input_file` parts).
 */
function toolResultItem(block: ToolResultBlock, customCalls: ReadonlySet<string>): InputItem {
  const attachments = block.attachments ?? [];
  const output =
    attachments.length === 0
      ? block.content
      : [
          ...(block.content === '' ? [] : [{ type: 'input_text' as const, text: block.content }]),
          ...attachments.map(mediaPart),
        ];
  if (customCalls.has(block.toolUseId))
    return { type: 'custom_tool_call_output', call_id: block.toolUseId, output };
  return { type: 'function_call_output', call_id: block.toolUseId, output };
}

function mediaPart(
  block: MediaBlock,
): OpenAI.Responses.ResponseInputImage | OpenAI.Responses.ResponseInputFile {
  const { source } = block;
  if (block.type === 'image')
    return {
      type: 'input_image',
      detail: 'auto',
      image_url: source.type === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`,
    };
  if (source.type === 'url') return { type: 'input_file', file_url: source.url };
  return {
    type: 'input_file',
    filename: block.title ?? defaultFilename(source.mediaType),
    file_data: `data:${source.mediaType};base64,${source.data}`,
  };
}

const defaultFilename = (mediaType: string) =>
  mediaType === 'application/pdf'
    ? 'document.pdf'
    : mediaType.startsWith('text/')
      ? 'document.txt'
      : 'document';

function assistantItems(message: AssistantMessage, customTools: ReadonlySet<string>): InputItem[] {
  const items: InputItem[] = [];
  let text: string | undefined;
  const flushText = () => {
    // Adjacent text blocks are one answer split by citations: they go back as one message.
    if (text !== undefined) items.push({ role: 'assistant', content: text });
    text = undefined;
  };
  for (const block of message.content) {
    if (block.type === 'text') {
      text = (text ?? '') + block.text;
      continue;
    }
    flushText();
    if (block.type === 'tool_use') items.push(toolCallItem(block, customTools));
    else if (block.type === 'thinking' && block.provider === 'openai' && isItem(block.providerData))
      items.push(block.providerData as unknown as InputItem);
    else if (block.type === 'provider' && block.provider === 'openai')
      items.push(block.raw as unknown as InputItem);
    // Anthropic thinking, redacted thinking and assistant images have no Responses input form.
  }
  flushText();
  return items;
}

function toolCallItem(
  block: Extract<AssistantMessage['content'][number], { type: 'tool_use' }>,
  customTools: ReadonlySet<string>,
): InputItem {
  if (customTools.has(block.name)) {
    const given = (block.input as { input?: unknown } | undefined)?.input;
    const input = block.inputText ?? (typeof given === 'string' ? given : JSON.stringify(block.input ?? ''));
    return { type: 'custom_tool_call', call_id: block.id, name: block.name, input };
  }
  const args = block.inputText ?? JSON.stringify(block.input ?? {});
  return { type: 'function_call', call_id: block.id, name: block.name, arguments: args };
}

const isItem = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
