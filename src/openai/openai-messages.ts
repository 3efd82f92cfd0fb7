/** reins messages as OpenAI Chat Completions messages. */
import type OpenAI from 'openai';
import { ConfigurationError } from '../errors/reins-error.js';
import type {
  AssistantMessage,
  DocumentBlock,
  ImageBlock,
  MediaSource,
  Message,
  ToolResultBlock,
  UserMessage,
} from '../model/content.js';

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.ChatCompletionContentPart;

/**
 * reins messages as Chat Completions messages. Tool results become `role: 'tool'` messages, which
 * take text only, so their image and PDF attachments follow in one user message that names the call
 * they came from. Assistant thinking, redacted thinking and provider blocks are left out: Chat
 * Completions has no field that takes them back. Text blocks are joined with `''` (`textOf`).
 */
export function toOpenAIMessages(system: string, messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = system === '' ? [] : [{ role: 'system', content: system }];
  messages.forEach((message, at) => {
    if (message.role === 'user') out.push(...userMessages(message, at));
    else {
      const assistant = assistantMessage(message);
      if (assistant) out.push(assistant);
    }
  });
  return out;
}

function userMessages(message: UserMessage, at: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  const attachments: ContentPart[] = [];
  const parts: ContentPart[] = [];
  message.content.forEach((block, index) => {
    const path = `messages[${at}].content[${index}]`;
    if (block.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: block.toolUseId, content: block.content });
      attachments.push(...attachmentParts(block, path));
    } else if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else parts.push(mediaPart(block, path));
  });
  const content = [...attachments, ...parts];
  if (content.length === 0) return out;
  const only = content[0];
  out.push({
    role: 'user',
    content: content.length === 1 && only?.type === 'text' ? only.text : content,
  });
  return out;
}

function attachmentParts(block: ToolResultBlock, path: string): ContentPart[] {
  const media = block.attachments ?? [];
  if (media.length === 0) return [];
  return [
    { type: 'text', text: `Attachments of tool result ${block.toolUseId}:` },
    ...media.map((item, index) => mediaPart(item, `${path}.attachments[${index}]`)),
  ];
}

const dataUrl = (source: Extract<MediaSource, { type: 'base64' }>) =>
  `data:${source.mediaType};base64,${source.data}`;

/** An image as an `image_url` part; a PDF as a `file` part (Chat takes PDFs only, as data). */
function mediaPart(block: ImageBlock | DocumentBlock, path: string): ContentPart {
  if (block.type === 'image')
    return {
      type: 'image_url',
      image_url: { url: block.source.type === 'base64' ? dataUrl(block.source) : block.source.url },
    };
  const source = block.source;
  if (source.type !== 'base64' || source.mediaType !== 'application/pdf')
    throw new ConfigurationError(
      `${path}.source`,
      'OpenAI Chat Completions takes documents only as base64 PDFs (a `file` part); send a URL-sourced PDF as base64 and plain text as a text block',
    );
  return {
    type: 'file',
    file: { filename: block.title ?? 'document.pdf', file_data: dataUrl(source) },
  };
}

function assistantMessage(message: AssistantMessage): ChatMessage | undefined {
  let text = '';
  const calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use')
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: block.inputText ?? JSON.stringify(block.input ?? {}) },
      });
  }
  // A turn that held only thinking has nothing Chat Completions can take back.
  if (text === '' && calls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}
