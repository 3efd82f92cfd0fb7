import type {
  JSONObject,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type {
  AssistantBlock,
  DocumentBlock,
  ImageBlock,
  JsonValue,
  MediaBlock,
  Message,
  ToolResultBlock,
  UserBlock,
} from '../model/content.js';
import { providerBlockTag, thinkingBlockTag } from './block-provider.js';

type UserPart = Extract<LanguageModelV4Message, { role: 'user' }>['content'][number];
type AssistantPart = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'][number];
type ToolContentPart = Extract<LanguageModelV4ToolResultOutput, { type: 'content' }>['value'][number];

/** A prompt in the AI SDK's shape, and for each of its messages the reins message it came from. */
export interface AiSdkPrompt {
  prompt: LanguageModelV4Prompt;
  /** `origins[i]` is the index in `request.messages` of `prompt[i]`; -1 for the system message. */
  origins: number[];
}

/**
 * reins messages as an AI SDK prompt (the V4 shape; `toV3CallOptions` rewrites the few V3
 * differences). Tool results leave the user message for a `tool` message of their own, in order;
 * thinking goes back only to the provider that produced it (`providerKey`, the first segment of the
 * model's `provider` id), carrying the provider metadata it came with.
 */
export function toAiSdkPrompt(
  system: string,
  messages: readonly Message[],
  providerKey: string,
): AiSdkPrompt {
  const prompt: LanguageModelV4Prompt = [];
  const origins: number[] = [];
  if (system !== '') {
    prompt.push({ role: 'system', content: system });
    origins.push(-1);
  }
  // A tool result names its tool in the AI SDK; reins keeps only the call id.
  const toolNames = new Map<string, string>();
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      for (const block of message.content) if (block.type === 'tool_use') toolNames.set(block.id, block.name);
      const content = message.content.flatMap((block) => assistantParts(block, providerKey));
      if (content.length > 0) {
        prompt.push({ role: 'assistant', content });
        origins.push(index);
      }
      return;
    }
    for (const run of runsOf(message.content)) {
      if (run.kind === 'tool') {
        prompt.push({
          role: 'tool',
          content: run.blocks.map(
            (block): LanguageModelV4ToolResultPart => ({
              type: 'tool-result',
              toolCallId: block.toolUseId,
              toolName: toolNames.get(block.toolUseId) ?? '',
              output: toolOutputOf(block),
            }),
          ),
        });
      } else prompt.push({ role: 'user', content: run.blocks.map(userPart) });
      origins.push(index);
    }
  });
  return { prompt, origins };
}

type Run =
  | { kind: 'tool'; blocks: ToolResultBlock[] }
  | { kind: 'user'; blocks: Exclude<UserBlock, ToolResultBlock>[] };

/** A user message split into consecutive runs of tool results and of other content, in order. */
function runsOf(blocks: readonly UserBlock[]): Run[] {
  const runs: Run[] = [];
  for (const block of blocks) {
    const last = runs[runs.length - 1];
    if (block.type === 'tool_result') {
      if (last?.kind === 'tool') last.blocks.push(block);
      else runs.push({ kind: 'tool', blocks: [block] });
    } else if (last?.kind === 'user') last.blocks.push(block);
    else runs.push({ kind: 'user', blocks: [block] });
  }
  return runs;
}

function userPart(block: Exclude<UserBlock, ToolResultBlock>): UserPart {
  return block.type === 'text' ? { type: 'text', text: block.text } : filePartOf(block);
}

/**
 * What the model sees of one tool result: its text, or an error text, or (with attachments) the
 * text followed by the files. The AI SDK has no error flag on `content` output, so a failed result
 * with attachments reads as text; the message the tool wrote says it failed.
 */
function toolOutputOf(block: ToolResultBlock): LanguageModelV4ToolResultOutput {
  if (block.attachments && block.attachments.length > 0)
    return {
      type: 'content',
      value: [{ type: 'text', text: block.content }, ...block.attachments.map(toolContentPart)],
    };
  return block.isError
    ? { type: 'error-text', value: block.content }
    : { type: 'text', value: block.content };
}

function toolContentPart(block: MediaBlock): ToolContentPart {
  const { type: _type, ...file } = filePartOf(block);
  return { type: 'file', ...file };
}

/** An image or document as a file part; a URL without a media type names only the top-level type. */
function filePartOf(block: ImageBlock | DocumentBlock): LanguageModelV4FilePart {
  const fallback = block.type === 'image' ? 'image' : 'application/pdf';
  const part: LanguageModelV4FilePart =
    block.source.type === 'base64'
      ? { type: 'file', mediaType: block.source.mediaType, data: { type: 'data', data: block.source.data } }
      : {
          type: 'file',
          mediaType: block.source.mediaType ?? fallback,
          data: { type: 'url', url: new URL(block.source.url) },
        };
  if (block.type === 'document' && block.title !== undefined) part.filename = block.title;
  return part;
}

function assistantParts(block: AssistantBlock, providerKey: string): AssistantPart[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'tool_use':
      // Arguments that never parsed cannot be sent back as an object; the tool result says what was wrong.
      return [{ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input ?? {} }];
    case 'thinking': {
      // Another provider's reasoning cannot be verified by this one; it stays out of the request.
      if (block.provider !== undefined && block.provider !== thinkingBlockTag(providerKey)) return [];
      const providerOptions = thinkingOptionsOf(block.providerData, block.signature, providerKey);
      return [{ type: 'reasoning', text: block.thinking, ...(providerOptions ? { providerOptions } : {}) }];
    }
    case 'redacted_thinking':
      if (block.provider !== undefined && block.provider !== thinkingBlockTag(providerKey)) return [];
      return [
        { type: 'reasoning', text: '', providerOptions: { [providerKey]: { redactedData: block.data } } },
      ];
    case 'image':
      return [filePartOf(block)];
    case 'provider':
      // Kept in the prompt's own part shape when it was read (see assemble-ai-sdk-stream.ts); a native
      // adapter's blocks (`anthropic`, `openai`) are wire blocks, not parts, and stay out.
      return block.provider === providerBlockTag(providerKey) && replayableKinds.has(block.kind)
        ? [partOf(block.raw)]
        : [];
  }
}

/** A provider block's part; a file's URL was kept as a string, the prompt wants a `URL`. */
function partOf(raw: { [key: string]: JsonValue }): AssistantPart {
  const data = raw['data'] as { type?: string; url?: string } | undefined;
  if (data?.type === 'url' && typeof data.url === 'string')
    return { ...raw, data: { type: 'url', url: new URL(data.url) } } as unknown as AssistantPart;
  return raw as unknown as AssistantPart;
}

/** Provider blocks that are prompt parts; sources and approval requests are output only. */
const replayableKinds: ReadonlySet<string> = new Set([
  'tool-call',
  'tool-result',
  'file',
  'reasoning-file',
  'custom',
]);

/**
 * The provider options a reasoning part goes back with: the provider metadata it arrived with
 * (Anthropic's signature, OpenAI's item id and encrypted content, Google's thought signature), or,
 * for a block another adapter of the same provider made, its bare signature.
 */
function thinkingOptionsOf(
  providerData: unknown,
  signature: string | undefined,
  providerKey: string,
): SharedV4ProviderOptions | undefined {
  const metadata = (providerData as { providerMetadata?: unknown } | undefined)?.providerMetadata;
  if (metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata))
    return metadata as { [provider: string]: JSONObject };
  return signature === undefined ? undefined : { [providerKey]: { signature } };
}
