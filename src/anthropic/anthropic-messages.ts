import type Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, MediaBlock, Message, ToolResultBlock, UserBlock } from '../model/content.js';

type Param = Anthropic.ContentBlockParam;

/** Whether a block another provider produced may go to Anthropic (its signatures are Anthropic's own). */
const ours = (provider: string | undefined) => provider === undefined || provider === 'anthropic';

/** An image or a document as a Messages API source. */
export function mediaParam(block: MediaBlock): Param {
  const source = block.source;
  if (block.type === 'image') {
    return source.type === 'url'
      ? { type: 'image', source: { type: 'url', url: source.url } }
      : {
          type: 'image',
          source: {
            type: 'base64',
            media_type: source.mediaType as Anthropic.Base64ImageSource['media_type'],
            data: source.data,
          },
        };
  }
  const document: Anthropic.DocumentBlockParam =
    source.type === 'url'
      ? { type: 'document', source: { type: 'url', url: source.url } }
      : source.mediaType === 'text/plain'
        ? { type: 'document', source: { type: 'text', media_type: 'text/plain', data: source.data } }
        : { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.data } };
  if (block.title !== undefined) document.title = block.title;
  return document;
}

function toolResultParam(block: ToolResultBlock): Param {
  const attachments = block.attachments ?? [];
  const content =
    attachments.length === 0
      ? block.content
      : ([
          ...(block.content === '' ? [] : [{ type: 'text', text: block.content }]),
          ...attachments.map(mediaParam),
        ] as Exclude<Anthropic.ToolResultBlockParam['content'], undefined>);
  return { type: 'tool_result', tool_use_id: block.toolUseId, content, is_error: block.isError };
}

function userParam(block: UserBlock): Param[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }];
    case 'tool_result':
      return [toolResultParam(block)];
    default:
      return [mediaParam(block)];
  }
}

/**
 * An assistant block as the API wants it back: thinking with its signature, redacted thinking,
 * server-tool blocks exactly as they came, citations on text. Blocks from another provider and
 * empty text (the API rejects it) are left out.
 */
function assistantParam(block: AssistantBlock): Param[] {
  switch (block.type) {
    case 'text': {
      if (block.text === '') return [];
      const text: Anthropic.TextBlockParam = { type: 'text', text: block.text };
      if (block.citations) text.citations = block.citations as unknown as Anthropic.TextCitationParam[];
      return [text];
    }
    case 'tool_use':
      // Arguments that never parsed cannot be sent back as an object; the tool result says what was wrong.
      return [
        {
          type: 'tool_use',
          id: block.id,
          name: block.name,
          input: (block.input ?? {}) as Record<string, unknown>,
          ...block.providerData,
        } as Param,
      ];
    case 'thinking':
      return ours(block.provider) && block.signature !== undefined
        ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature }]
        : [];
    case 'redacted_thinking':
      return ours(block.provider) ? [{ type: 'redacted_thinking', data: block.data }] : [];
    case 'provider':
      // The container is a request field, not content: see containerOf.
      return block.provider === 'anthropic' && block.kind !== 'container'
        ? [block.raw as unknown as Param]
        : [];
    default:
      return [];
  }
}

/**
 * reins messages in the Messages API's shape. An assistant turn left with nothing Anthropic can
 * read (all of it another provider's reasoning) is dropped, since the API rejects empty content, and
 * the user turns around it are joined.
 */
export function toAnthropicMessages(messages: readonly Message[]): Anthropic.MessageParam[] {
  return anthropicMessagesWithPositions(messages).messages;
}

/** The messages, and where each reins message landed (-1 when dropped), for cache breakpoints. */
export function anthropicMessagesWithPositions(messages: readonly Message[]): {
  messages: Anthropic.MessageParam[];
  positions: number[];
} {
  const out: Anthropic.MessageParam[] = [];
  const positions: number[] = [];
  for (const message of messages) {
    const content =
      message.role === 'user' ? message.content.flatMap(userParam) : message.content.flatMap(assistantParam);
    const last = out.at(-1);
    if (content.length === 0 && message.role === 'assistant') positions.push(-1);
    else if (last && last.role === message.role && Array.isArray(last.content)) {
      last.content.push(...content);
      positions.push(out.length - 1);
    } else {
      out.push({ role: message.role, content });
      positions.push(out.length - 1);
    }
  }
  return { messages: out, positions };
}

/** The id of the latest code-execution container the conversation ran in, for the `container` field. */
export function containerOf(messages: readonly Message[]): string | undefined {
  for (let at = messages.length - 1; at >= 0; at--) {
    const message = messages[at];
    if (message?.role !== 'assistant') continue;
    for (const block of message.content)
      if (block.type === 'provider' && block.provider === 'anthropic' && block.kind === 'container') {
        const id = block.raw['id'];
        if (typeof id === 'string') return id;
      }
  }
  return undefined;
}
