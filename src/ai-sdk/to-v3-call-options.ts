import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3ToolResultOutput,
  LanguageModelV4CallOptions,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4ToolResultOutput,
} from '@ai-sdk/provider';

type V3AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number];
type V3ToolContentPart = Extract<LanguageModelV3ToolResultOutput, { type: 'content' }>['value'][number];
type V4ToolContentPart = Extract<LanguageModelV4ToolResultOutput, { type: 'content' }>['value'][number];

/**
 * V4 call options for a LanguageModelV3 (AI SDK 6 providers). The two specifications differ, for
 * what reins sends, only in how file bytes are spelled and in V4's additions (`reasoning`, custom
 * and reasoning-file parts), which a V3 model has no place for and are left out.
 */
export function toV3CallOptions(call: LanguageModelV4CallOptions): LanguageModelV3CallOptions {
  const { reasoning: _reasoning, prompt, ...rest } = call;
  return { ...rest, prompt: prompt.map(toV3Message) };
}

function toV3Message(message: LanguageModelV4Message): LanguageModelV3Message {
  switch (message.role) {
    case 'system':
      return message;
    case 'user':
      return {
        ...message,
        content: message.content.map((part) => (part.type === 'file' ? toV3File(part) : part)),
      };
    case 'assistant':
      return {
        ...message,
        content: message.content.flatMap((part): V3AssistantPart[] => {
          if (part.type === 'file') return [toV3File(part)];
          if (part.type === 'custom' || part.type === 'reasoning-file') return [];
          if (part.type === 'tool-result') return [{ ...part, output: toV3Output(part.output) }];
          return [part];
        }),
      };
    case 'tool':
      return {
        ...message,
        content: message.content.map((part) =>
          part.type === 'tool-result' ? { ...part, output: toV3Output(part.output) } : part,
        ),
      };
  }
}

/** V3 file data is the bytes, a base64 string or a URL; its media type is full or a wildcard. */
function toV3File(part: LanguageModelV4FilePart): LanguageModelV3FilePart {
  const { data, mediaType, ...rest } = part;
  return {
    ...rest,
    type: 'file',
    mediaType: mediaType.includes('/') ? mediaType : `${mediaType}/*`,
    // reins makes only data and URL parts (no provider references, no inline text).
    data: data.type === 'data' ? data.data : data.type === 'url' ? data.url : '',
  };
}

function toV3Output(output: LanguageModelV4ToolResultOutput): LanguageModelV3ToolResultOutput {
  if (output.type !== 'content') return output;
  return { type: 'content', value: output.value.flatMap(toV3ToolContent) };
}

function toV3ToolContent(part: V4ToolContentPart): V3ToolContentPart[] {
  if (part.type !== 'file') return [part];
  const image = part.mediaType.startsWith('image');
  if (part.data.type === 'url') return [{ type: image ? 'image-url' : 'file-url', url: part.data.url.href }];
  if (part.data.type !== 'data' || typeof part.data.data !== 'string') return [];
  return image
    ? [{ type: 'image-data', data: part.data.data, mediaType: part.mediaType }]
    : [
        {
          type: 'file-data',
          data: part.data.data,
          mediaType: part.mediaType,
          ...(part.filename !== undefined ? { filename: part.filename } : {}),
        },
      ];
}
